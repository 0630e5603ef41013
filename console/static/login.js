// Presses the login page's one button, so that a sign-in link signs in
// with one click; without JavaScript the person presses it.
document.addEventListener("DOMContentLoaded", function () {
  var f = document.getElementById("login-form");
  if (f) { f.submit(); }
});
