// customer.js runs on customers' pages only. It tells the console the
// browser's time zone once, in a cookie, so the next page shows times in
// the customer's own zone instead of the business's. Nothing else is sent
// and no page needs it: without JavaScript, times stay in the business's
// zone, which the footer names. It also shows a receipt's "Print this
// receipt" button, which needs it.
(function () {
  "use strict";
  var buttons = document.querySelectorAll("[data-print]");
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].hidden = false;
    buttons[i].addEventListener("click", function () {
      window.print();
    });
  }
})();
(function () {
  "use strict";
  var zone = "";
  try {
    zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  } catch (e) {
    return;
  }
  if (!/^[A-Za-z_+\-\/0-9]{1,64}$/.test(zone)) {
    return;
  }
  var kept = document.cookie.split("; ").indexOf("cs_zone=" + encodeURIComponent(zone)) >= 0;
  if (kept) {
    return;
  }
  document.cookie = "cs_zone=" + encodeURIComponent(zone) + "; Path=/; Max-Age=31536000; SameSite=Lax" +
    (location.protocol === "https:" ? "; Secure" : "");
})();
