// The payer's page, enhanced (every page works without this file). All text comes from the server in
// the page's language: this script only moves it about.
//  - The form: operators narrowed to the chosen country, the code field shown only for an operator that
//    needs one, country and operator suggested from the phone number as it is typed (the prefix table
//    the form carries), and sent without a reload (the same POST, asking for JSON).
//  - A pending payment's status (section[data-poll]) follows the payment by a short poll until final.
(function () {
  'use strict';
  var POLL_MS = 2000;
  var canFetch = !!(window.fetch && window.history && history.pushState);

  function $(sel, root) { return (root || document).querySelector(sel); }

  function narrowOperators(form) {
    var country = $('#country_code', form).value;
    var select = $('#operator_code', form);
    var groups = select.querySelectorAll('optgroup');
    for (var i = 0; i < groups.length; i++) {
      var other = country !== '' && groups[i].getAttribute('data-country') !== country;
      groups[i].disabled = other;
      groups[i].hidden = other;
    }
    var chosen = select.options[select.selectedIndex];
    if (chosen && chosen.parentNode.disabled) select.value = '';
  }

  function showOtp(form) {
    var field = $('[data-otp-field]', form);
    if (!field) return;
    var select = $('#operator_code', form);
    var chosen = select.options[select.selectedIndex];
    field.hidden = !(chosen && chosen.getAttribute('data-otp'));
  }

  function longestPrefix(entries, digits) {
    var best = null;
    for (var i = 0; i < entries.length; i++) {
      if (digits.indexOf(entries[i][0]) === 0 && (!best || entries[i][0].length > best[0].length)) best = entries[i];
    }
    return best;
  }

  // Country from the calling code (+237 → CM), operator from the mobile prefix; a suggestion only:
  // an operator the payer chose is never replaced.
  function suggest(form, state) {
    var table = state.table;
    var raw = $('#phone', form).value.replace(/[\s().-]/g, '');
    var countrySelect = $('#country_code', form);
    var country = countrySelect.value;
    var national = raw.replace(/\D/g, '');
    var intl = /^(\+|00)(\d+)$/.exec(raw);
    if (intl) {
      var codes = Object.keys(table.dial).map(function (c) { return [c]; });
      var code = longestPrefix(codes, intl[2]);
      if (!code) return;
      country = table.dial[code[0]];
      national = intl[2].slice(code[0].length);
      if (countrySelect.value !== country) { countrySelect.value = country; narrowOperators(form); }
    }
    var operatorSelect = $('#operator_code', form);
    var entry = country && table.ops[country] ? longestPrefix(table.ops[country], national) : null;
    if (entry && (operatorSelect.value === '' || state.suggested)) {
      operatorSelect.value = entry[1];
      state.suggested = true;
      showOtp(form);
    }
  }

  function encode(form) {
    var parts = [];
    for (var i = 0; i < form.elements.length; i++) {
      var el = form.elements[i];
      if (!el.name || el.disabled) continue;
      parts.push(encodeURIComponent(el.name) + '=' + encodeURIComponent(el.value));
    }
    return parts.join('&');
  }

  function show(answer) {
    var main = $('#content');
    document.title = answer.title;
    main.innerHTML = answer.html;
    enhance();
    var focus = $('.error-summary', main) || $('h1', main);
    if (focus) { focus.setAttribute('tabindex', '-1'); focus.focus(); }
  }

  function send(form, state) {
    if (state.sending) return;
    state.sending = true;
    var button = $('button[type="submit"]', form);
    if (button) button.disabled = true;
    fetch(form.action, {
      method: 'POST', credentials: 'same-origin', body: encode(form),
      headers: { 'Accept': 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
    }).then(function (res) { return res.json(); }).then(function (answer) {
      if (answer.location) {
        history.pushState(null, '', answer.location);
        var other = $('footer a[hreflang]');
        if (other) other.href = answer.location + '?lang=' + other.getAttribute('hreflang');
      }
      show(answer);
    }).catch(function () {
      // The network or the answer failed: the plain form post (same attempt id: still one payment).
      form.submit();
    });
  }

  function enhanceForm(form) {
    var state = { suggested: false, sending: false, table: JSON.parse(form.getAttribute('data-prefixes') || '{"dial":{},"ops":{}}') };
    $('#country_code', form).addEventListener('change', function () { narrowOperators(form); showOtp(form); });
    $('#operator_code', form).addEventListener('change', function () { state.suggested = false; showOtp(form); });
    $('#phone', form).addEventListener('input', function () { suggest(form, state); });
    narrowOperators(form);
    showOtp(form);
    if (canFetch) form.addEventListener('submit', function (e) { e.preventDefault(); send(form, state); });
  }

  function follow(section) {
    var url = section.getAttribute('data-poll');
    var tries = 0;
    function tick() {
      tries++;
      fetch(url, { headers: { 'Accept': 'application/json' }, credentials: 'same-origin' }).then(function (res) {
        return res.status === 200 ? res.json() : { final: res.status === 404 };
      }).then(function (answer) {
        if (answer.html) {
          section.innerHTML = answer.html;
          section.className = 'status s-' + answer.status;
          document.title = answer.title;
        }
        if (answer.final) section.removeAttribute('data-poll');
        else setTimeout(tick, Math.min(POLL_MS + tries * 100, 10000));
      }, function () { setTimeout(tick, 5000); });
    }
    setTimeout(tick, POLL_MS);
  }

  function enhance() {
    var form = $('form.pay');
    if (form) enhanceForm(form);
    var section = $('#status[data-poll]');
    if (section && window.fetch) follow(section);
  }

  // Back and forward after the form was sent without a reload: show what the address says.
  window.addEventListener('popstate', function () { location.reload(); });
  enhance();
}());
