// Enhancements only: every page works without this script.
// Copy buttons on install lines, and "/" to focus the search field.
(function () {
  "use strict";
  if (navigator.clipboard) {
    document.querySelectorAll("pre.install").forEach(function (pre) {
      var b = document.createElement("button");
      b.type = "button";
      b.textContent = "Copy";
      b.setAttribute("aria-label", "Copy " + (pre.getAttribute("data-label") || "this line"));
      b.addEventListener("click", function () {
        navigator.clipboard.writeText(pre.querySelector("code").textContent).then(function () {
          b.textContent = "Copied";
        });
      });
      pre.appendChild(b);
    });
  }
  var q = document.getElementById("q");
  if (q) {
    document.addEventListener("keydown", function (e) {
      var t = e.target.tagName;
      if (e.key === "/" && t !== "INPUT" && t !== "TEXTAREA" && t !== "SELECT") {
        e.preventDefault();
        q.focus();
      }
    });
  }
})();
