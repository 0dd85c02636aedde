// passkey.js runs the browser's half of the WebAuthn ceremonies: "Add a
// passkey" on the account's second-factor page, "Use a passkey" at the
// sign-in's factor step and "Approve with your passkey" on a card's
// step-up page (forms marked data-passkey). Inputs marked
// data-passkey-field go with both posts (the step-up's version and
// arguments hash: what the page showed). The console sends the
// options with their binary fields in base64url; navigator.credentials
// takes ArrayBuffers, and the answer goes back as base64url JSON. Loaded
// with the page's CSP nonce; no inline handlers. The words it shows are
// the page's, in the page's language: the form's data-passkey-refused,
// -cancelled and -failed (views.PasskeyScriptWords); the script holds none.
(function () {
  "use strict";

  function toBuffer(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) { s += "="; }
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) { out[i] = bin.charCodeAt(i); }
    return out.buffer;
  }

  function toBase64url(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) { bin += String.fromCharCode(bytes[i]); }
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function descriptors(list) {
    return (list || []).map(function (d) { d.id = toBuffer(d.id); return d; });
  }

  function creationOptions(o) {
    var p = o.publicKey;
    p.challenge = toBuffer(p.challenge);
    p.user.id = toBuffer(p.user.id);
    p.excludeCredentials = descriptors(p.excludeCredentials);
    return p;
  }

  function requestOptions(o) {
    var p = o.publicKey;
    p.challenge = toBuffer(p.challenge);
    p.allowCredentials = descriptors(p.allowCredentials);
    return p;
  }

  // answer is a PublicKeyCredential in its JSON form (what toJSON() gives
  // where the browser has it).
  function answer(cred) {
    var r = cred.response, out = {
      id: cred.id, rawId: toBase64url(cred.rawId), type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64url(r.clientDataJSON) }
    };
    if (cred.authenticatorAttachment) { out.authenticatorAttachment = cred.authenticatorAttachment; }
    if (r.attestationObject) {
      out.response.attestationObject = toBase64url(r.attestationObject);
      if (r.getTransports) { out.response.transports = r.getTransports(); }
    } else {
      out.response.authenticatorData = toBase64url(r.authenticatorData);
      out.response.signature = toBase64url(r.signature);
      if (r.userHandle) { out.response.userHandle = toBase64url(r.userHandle); }
    }
    return out;
  }

  function post(url, csrf, body, refused) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body || {})
    }).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (j) {
        if (!res.ok && !j.error) { j.error = refused; }
        return j;
      });
    });
  }

  function run(form) {
    var kind = form.getAttribute("data-passkey");
    // The error line beside the form or, on a page with one error
    // summary at its top (the step-up page), that summary.
    var box = form.parentNode.querySelector("[data-passkey-error]") || document.querySelector("[data-passkey-error]");
    var button = form.querySelector("button");
    var csrf = form.querySelector("input[name=_csrf]").value;
    var name = form.querySelector("input[name=name]");
    var password = form.querySelector("input[name=password]");
    var message = box.querySelector("[data-passkey-message]") || box;
    var words = {
      refused: form.getAttribute("data-passkey-refused") || "",
      cancelled: form.getAttribute("data-passkey-cancelled") || "",
      failed: form.getAttribute("data-passkey-failed") || ""
    };
    var fields = {};
    form.querySelectorAll("input[data-passkey-field]").forEach(function (f) { fields[f.name] = f.value; });
    function withFields(body) {
      Object.keys(fields).forEach(function (k) { body[k] = fields[k]; });
      return body;
    }
    function fail(msg) {
      message.textContent = msg;
      box.hidden = false;
      box.setAttribute("tabindex", "-1");
      box.focus();
      button.disabled = false;
    }
    function done(j) {
      if (j.error) { fail(j.error); if (j.next) { setTimeout(function () { location.assign(j.next); }, 3000); } return; }
      location.assign(j.next);
    }
    box.hidden = true;
    button.disabled = true;
    post(form.getAttribute("data-begin"), csrf, withFields(password ? { password: password.value } : {}), words.refused).then(function (opts) {
      if (opts.error) { done(opts); return null; }
      var ceremony = kind === "register"
        ? navigator.credentials.create({ publicKey: creationOptions(opts) })
        : navigator.credentials.get({ publicKey: requestOptions(opts) });
      return ceremony.then(function (cred) {
        var body = withFields({ credential: answer(cred) });
        if (name) { body.name = name.value; }
        return post(form.getAttribute("data-finish"), csrf, body, words.refused).then(done);
      });
    }).catch(function (e) {
      // The browser's own message is in the browser's language, not the
      // page's: it goes to the console for whoever debugs, not to the page.
      if (window.console && e) { window.console.warn("passkey:", e.name, e.message); }
      fail(e && e.name === "NotAllowedError" ? words.cancelled : words.failed);
    });
  }

  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    if (!window.PublicKeyCredential) {
      form.querySelector("button").disabled = true;
      return;
    }
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      run(form);
    });
  });
})();
