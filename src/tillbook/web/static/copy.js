/* Copy buttons for secrets shown once: a button marked data-copy="ID" copies the
   text of element ID to the clipboard and says so. The buttons are hidden in the
   page and shown here, so without JavaScript (or without a clipboard, as on plain
   http other than localhost) nothing offers what cannot work: the secret stays
   selectable as text. No library, no build. */
(function () {
  "use strict";
  if (!navigator.clipboard || !window.isSecureContext) return;
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var source = document.getElementById(button.getAttribute("data-copy"));
    if (!source) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.textContent.trim()).then(
        function () { button.textContent = "Copied"; },
        function () { button.textContent = "Copy failed: select the text"; }
      );
      window.setTimeout(function () { button.textContent = label; }, 2500);
    });
  });
})();
