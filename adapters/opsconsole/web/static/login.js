"use strict";
// Shows why the last login was refused (the server redirects with ?login=failed).
if (new URLSearchParams(location.search).get("login") === "failed") {
  document.getElementById("login-failed").hidden = false;
}
