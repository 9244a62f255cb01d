/* Search as you type, for a search form marked data-live="ID": after a short pause
   in typing, the form's own GET (the same URL a submit would load) is fetched and
   the element ID of the answer replaces the one on this page. Without JavaScript,
   or if the fetch fails, the form submits as a plain GET. No library, no build. */
(function () {
  "use strict";
  var DELAY = 250;
  function live(form) {
    var target = form.getAttribute("data-live");
    var box = form.querySelector("input[type=search]");
    if (!target || !box || !window.fetch || !window.DOMParser) return;
    var timer = null;
    var latest = 0;
    function refresh() {
      var params = new URLSearchParams(new FormData(form));
      var url = form.getAttribute("action") + "?" + params.toString();
      var mine = ++latest;
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (response) {
          if (!response.ok || response.redirected) throw new Error("not a list");
          return response.text();
        })
        .then(function (html) {
          if (mine !== latest) return; /* a newer search has been sent since */
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(target);
          var here = document.getElementById(target);
          if (!fresh || !here) return;
          here.replaceWith(fresh);
          window.history.replaceState(null, "", url);
        })
        .catch(function () { /* the submit button still works */ });
    }
    box.addEventListener("input", function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(refresh, DELAY);
    });
    form.addEventListener("change", function (event) {
      if (event.target !== box) { window.clearTimeout(timer); refresh(); }
    });
  }
  document.querySelectorAll("form[data-live]").forEach(live);
})();
