// Progressive enhancement only: every page works without this file.
//  - [data-copy]: a Copy button for a revealed secret (hidden when scripts do not run).
//  - form[data-confirm]: asks in a <dialog> before submitting; without JavaScript the server asks
//    on a page of its own (the form is sent without confirmed=yes).
//  - The words it shows come from the page (<body data-label-*>), in the page's language.
(function () {
  'use strict';
  function label(name, fallback) {
    return (document.body && document.body.getAttribute('data-label-' + name)) || fallback;
  }
  function copyText(button) {
    var target = document.getElementById(button.getAttribute('data-copy'));
    if (!target) return;
    var text = target.textContent || '';
    var done = function () { button.textContent = label('copied', 'Copied'); setTimeout(function () { button.textContent = label('copy', 'Copy'); }, 2000); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { selectText(target); });
    } else {
      selectText(target);
      try { if (document.execCommand('copy')) done(); } catch (e) { /* selected for a manual copy */ }
    }
  }
  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }
  function confirmDialog(form) {
    var dialog = document.createElement('dialog');
    dialog.setAttribute('aria-labelledby', 'confirm-q');
    var p = document.createElement('p');
    p.id = 'confirm-q';
    p.textContent = form.getAttribute('data-confirm');
    var row = document.createElement('div');
    row.className = 'row';
    var cancel = document.createElement('button');
    cancel.type = 'button';
    cancel.className = 'copy';
    cancel.textContent = label('cancel', 'Cancel');
    var ok = document.createElement('button');
    ok.type = 'button';
    ok.className = 'danger';
    ok.textContent = label('confirm', 'Confirm');
    ok.setAttribute('data-dialog-confirm', '');
    row.appendChild(cancel);
    row.appendChild(ok);
    dialog.appendChild(p);
    dialog.appendChild(row);
    document.body.appendChild(dialog);
    cancel.addEventListener('click', function () { dialog.close(); });
    dialog.addEventListener('close', function () { dialog.remove(); });
    ok.addEventListener('click', function () {
      var field = document.createElement('input');
      field.type = 'hidden';
      field.name = 'confirmed';
      field.value = 'yes';
      form.appendChild(field);
      dialog.close();
      form.submit();
    });
    dialog.showModal();
    cancel.focus();
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('[data-copy]').forEach(function (b) {
      b.hidden = false;
      b.addEventListener('click', function () { copyText(b); });
    });
    document.querySelectorAll('form[data-confirm]').forEach(function (f) {
      f.addEventListener('submit', function (ev) {
        if (typeof HTMLDialogElement !== 'function') return; // the server will ask instead
        ev.preventDefault();
        confirmDialog(f);
      });
    });
  });
})();
