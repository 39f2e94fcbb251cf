// Progressive enhancement only: every page works without this script.
// Destructive actions ask first.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
// A value shown once (a new key) gets a button that copies it.
for (const button of document.querySelectorAll("button[data-copy]")) {
  const source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    await navigator.clipboard.writeText(source.textContent);
    button.textContent = "Copied";
  });
}
