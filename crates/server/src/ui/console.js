// Progressive enhancement only: every page works without this script.
// Destructive actions ask first.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
