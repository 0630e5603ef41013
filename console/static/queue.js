// The live review queue: listens to /queue/events (server-sent events)
// and, when the pending proposals the page's filter selects change,
// shows a notice with a link that reloads the page. Without JavaScript
// the page works the same, without the notice.
document.addEventListener("DOMContentLoaded", function () {
  var live = document.getElementById("queue-live");
  if (!live || !window.EventSource) { return; }
  var notice = document.getElementById("live-notice");
  var link = document.getElementById("live-reload");
  var total = parseInt(live.getAttribute("data-total"), 10) || 0;
  var newest = live.getAttribute("data-newest") || "";
  var events = new EventSource(live.getAttribute("data-events"));
  link.setAttribute("href", window.location.pathname + window.location.search);
  events.addEventListener("queue", function (e) {
    var s;
    try { s = JSON.parse(e.data); } catch (err) { return; }
    if (s.total === total && s.newest === newest) {
      notice.hidden = true;
      return;
    }
    var added = s.total - total;
    if (added > 0) {
      link.textContent = added + " new proposal" + (added === 1 ? "" : "s") + " — reload";
    } else {
      link.textContent = "The queue changed — reload";
    }
    notice.hidden = false;
  });
  events.addEventListener("signout", function () { events.close(); });
});
