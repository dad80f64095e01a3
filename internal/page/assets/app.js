// Enhancements only: every page works without this script.
// Copy buttons beside install lines, "/" to focus the search field, how
// long ago a date was (the page itself gives the date: it is cached per
// snapshot and exported as it is), and a skill's live fetch count.
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
      pre.parentNode.appendChild(b);
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
  // An export's catalogue has no server to search: filter its list, by
  // the words of the search field (matched in each item's name,
  // description and tags, the descriptions read from the RFC index the
  // export holds), the kind, and ?q=, ?kind= and ?tag= of the address.
  var form = document.querySelector("form[data-filter]");
  if (form && q) {
    var items = Array.prototype.slice.call(document.querySelectorAll("ul.items > li"));
    var kind = document.getElementById("kind"), count = document.getElementById("count");
    var params = new URLSearchParams(location.search), tag = params.get("tag") || "", known = {};
    q.value = params.get("q") || "";
    if (kind && params.get("kind")) {
      kind.value = params.get("kind");
    }
    var apply = function () {
      var words = q.value.toLowerCase().split(/\s+/).filter(Boolean), k = kind ? kind.value : "", n = 0;
      items.forEach(function (li) {
        var name = li.getAttribute("data-name"), hay = (name + " " + (known[name] || "") + " " + li.textContent).toLowerCase();
        var tags = Array.prototype.map.call(li.querySelectorAll(".tags a"), function (a) { return a.textContent; });
        var ok = (!k || li.getAttribute("data-kind") === k) && (!tag || tags.indexOf(tag) >= 0) &&
          words.every(function (w) { return hay.indexOf(w) >= 0; });
        li.hidden = !ok;
        n += ok ? 1 : 0;
      });
      count.textContent = n + (n === 1 ? " item" : " items") + (tag ? " tagged " + tag : "");
    };
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      apply();
    });
    q.addEventListener("input", apply);
    if (kind) {
      kind.addEventListener("change", apply);
    }
    apply();
    if (window.fetch) {
      fetch(form.getAttribute("data-filter")).then(function (r) {
        return r.ok ? r.json() : null;
      }).then(function (j) {
        (j && j.skills || []).forEach(function (s) { known[s.name] = s.description || ""; });
        apply();
      }).catch(function () {});
    }
  }
  var rtf = window.Intl && Intl.RelativeTimeFormat && new Intl.RelativeTimeFormat("en", { numeric: "auto" });
  document.querySelectorAll("time[datetime]").forEach(function (t) {
    var ms = Date.parse(t.getAttribute("datetime"));
    if (!rtf || isNaN(ms)) {
      return;
    }
    var h = (ms - Date.now()) / 36e5, d = h / 24, s;
    if (Math.abs(h) < 1) {
      s = rtf.format(Math.round(h * 60), "minute");
    } else if (Math.abs(h) < 24) {
      s = rtf.format(Math.round(h), "hour");
    } else if (Math.abs(d) < 60) {
      s = rtf.format(Math.round(d), "day");
    } else if (Math.abs(d) < 730) {
      s = rtf.format(Math.round(d / 30.44), "month");
    } else {
      s = rtf.format(Math.round(d / 365.25), "year");
    }
    var span = document.createElement("span");
    span.className = "ago";
    span.textContent = " (" + s + ")";
    t.parentNode.insertBefore(span, t.nextSibling);
  });
  var fd = document.querySelector("dd.fetches");
  if (fd && window.fetch) {
    fetch(fd.getAttribute("data-href"), { headers: { Accept: "application/json" } }).then(function (r) {
      return r.ok ? r.json() : null;
    }).then(function (j) {
      (j && j.skills || []).forEach(function (hit) {
        if (hit.name === fd.getAttribute("data-name")) {
          fd.textContent = hit.installs + " since the server started";
          document.querySelectorAll(".fetches").forEach(function (e) { e.hidden = false; });
        }
      });
    }).catch(function () {});
  }
})();
