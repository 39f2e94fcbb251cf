// Progressive enhancement only: every page works without this script.
// Destructive actions ask first.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
// A value shown in full (a new key, a payload) gets a button that copies it.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async (event) => {
    event.preventDefault();
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = "Copied";
  });
}
// Auto-refresh, remembered by this browser: the page reloads every few
// seconds, unless the operator is typing into one of its fields.
const refresh = document.querySelector("header .refresh");
if (refresh) {
  const box = refresh.querySelector("#auto-refresh");
  const every = refresh.querySelector("#refresh-every");
  const saved = localStorage.getItem("idem-refresh");
  if (saved) {
    box.checked = true;
    every.value = saved;
  }
  refresh.hidden = false;
  let timer = null;
  const schedule = () => {
    clearTimeout(timer);
    if (!box.checked) return;
    timer = setTimeout(() => {
      const typing = document.activeElement && document.activeElement.matches("input, select, textarea")
        && !refresh.contains(document.activeElement);
      if (typing) schedule();
      else location.reload();
    }, Number(every.value) * 1000);
  };
  const save = () => {
    if (box.checked) localStorage.setItem("idem-refresh", every.value);
    else localStorage.removeItem("idem-refresh");
    schedule();
  };
  box.addEventListener("change", save);
  every.addEventListener("change", save);
  schedule();
}
