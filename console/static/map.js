// Map zoom on the world page, progressive: the zoom areas of the map
// picture and its zoom links work without JavaScript. This keeps the
// areas on the parts they name when the picture is shown smaller than
// its natural size (image map coordinates do not scale), and lets the
// + and - keys zoom in and out.
document.addEventListener("DOMContentLoaded", function () {
  var img = document.getElementById("map-img");
  var map = document.getElementById("map-zoom");
  if (img && map) {
    var areas = Array.prototype.slice.call(map.querySelectorAll("area"));
    areas.forEach(function (a) { a.setAttribute("data-coords", a.getAttribute("coords")); });
    var scale = function () {
      var natural = img.naturalWidth || parseInt(img.getAttribute("width"), 10);
      if (!natural || !img.clientWidth) { return; }
      var f = img.clientWidth / natural;
      areas.forEach(function (a) {
        var c = a.getAttribute("data-coords").split(",").map(function (n) { return Math.round(parseInt(n, 10) * f); });
        a.setAttribute("coords", c.join(","));
      });
    };
    img.addEventListener("load", scale);
    window.addEventListener("resize", scale);
    scale();
  }
  document.addEventListener("keydown", function (e) {
    var t = e.target;
    if (e.ctrlKey || e.metaKey || e.altKey || (t && /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(t.tagName))) { return; }
    var key = e.key === "=" ? "+" : e.key;
    var link = document.querySelector('.map-nav a[data-key="' + key + '"]');
    if (link) { window.location.href = link.href; }
  });
});
