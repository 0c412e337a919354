// Shipgraph playground bootstrap: API key bar + custom GraphiQL fetcher.
//
// This file is our own committed code and is always served by the binary
// (also when GraphiQL itself comes from the CDN fallback). It runs after the
// React, ReactDOM and GraphiQL UMD bundles, which define window globals.
(function () {
  'use strict';

  var KEY_STORAGE = 'shipgraph:playground:apiKey';
  var mount = document.getElementById('graphiql');
  var input = document.getElementById('sg-api-key');
  var toggle = document.getElementById('sg-api-key-toggle');
  // Inert JSON written by html/template; parsing it (instead of an inline
  // script) lets the page's CSP forbid inline scripts entirely.
  var config = JSON.parse(document.getElementById('sg-config').textContent);

  function showMessage(text) {
    var p = document.createElement('p');
    p.className = 'sg-message';
    p.textContent = text;
    mount.replaceChildren(p);
  }

  if (typeof window.React === 'undefined' || typeof window.ReactDOM === 'undefined' ||
      typeof window.GraphiQL === 'undefined') {
    showMessage(config.embedded
      ? 'GraphiQL failed to load from this server.'
      : 'GraphiQL failed to load from the CDN (no internet access?). Build the offline assets with `make assets`.');
    return;
  }

  // localStorage can throw (disabled storage, some private modes); the key
  // bar must keep working without persistence then.
  function readStoredKey() {
    try { return window.localStorage.getItem(KEY_STORAGE) || ''; } catch (e) { return ''; }
  }
  function storeKey(value) {
    try {
      if (value) window.localStorage.setItem(KEY_STORAGE, value);
      else window.localStorage.removeItem(KEY_STORAGE);
    } catch (e) { /* not persisted; still used for this page */ }
  }

  // A key the user entered earlier wins over the server's default; clearing
  // the field forgets it, so the default applies again on the next load.
  input.value = readStoredKey() || config.defaultKey || '';

  toggle.addEventListener('click', function () {
    var hidden = input.type === 'password';
    input.type = hidden ? 'text' : 'password';
    toggle.textContent = hidden ? 'Hide' : 'Show';
  });

  // Request bookkeeping on <body> for automated browser checks: they wait
  // for GraphiQL's own start-up introspection to settle before pressing
  // run, so a late schema error cannot overwrite the result pane.
  var inflight = 0, completed = 0;
  function track(delta) {
    inflight += delta;
    if (delta < 0) completed++;
    document.body.setAttribute('data-sg-inflight', String(inflight));
    document.body.setAttribute('data-sg-fetches', String(completed));
  }

  function makeFetcher() {
    return async function fetcher(params, opts) {
      if (isSubscription(params, opts)) return subscribe(params, opts);
      track(1);
      try {
        return await send(params, opts);
      } finally {
        track(-1);
      }
    };
  }

  // send posts one GraphQL request with the API key and returns the parsed body.
  async function send(params, opts) {
    var headers = new Headers({
      'Content-Type': 'application/json',
      'Accept': 'application/graphql-response+json, application/json'
    });
    var key = input.value.trim();
    if (key) headers.set('Authorization', 'Token ' + key);
    // Headers from GraphiQL's Headers tab are applied last: a header set
    // there (even Authorization) is a deliberate per-request override.
    var extra = (opts && opts.headers) || {};
    Object.keys(extra).forEach(function (name) {
      headers.set(name, String(extra[name]));
    });
    var res = await fetch(config.endpoint, {
      method: 'POST',
      headers: headers,
      body: JSON.stringify(params),
      credentials: 'same-origin'
    });
    var text = await res.text();
    try {
      return JSON.parse(text);
    } catch (e) {
      // Non-JSON answers (proxy errors, plain-text 401s) are shown as a
      // GraphQL-style error instead of an opaque parse failure.
      return { errors: [{ message: 'HTTP ' + res.status + ' ' + res.statusText + ': ' + text.slice(0, 2000) }] };
    }
  }

  // isSubscription reports whether the operation to run is a subscription:
  // from the parsed document GraphiQL hands over, else from the text.
  function isSubscription(params, opts) {
    var doc = opts && opts.documentAST;
    if (doc && doc.definitions) {
      var ops = doc.definitions.filter(function (d) { return d.kind === 'OperationDefinition'; });
      var op = ops.filter(function (d) { return d.name && d.name.value === params.operationName; })[0] || ops[0];
      return !!op && op.operation === 'subscription';
    }
    var text = String(params.query || '').replace(/#[^\n]*/g, '');
    return /^\s*subscription\b/.test(text);
  }

  // The WebSocket endpoint: the GraphQL endpoint with ws: or wss:.
  function wsEndpoint() {
    var u = new URL(config.endpoint, window.location.href);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    return u.toString();
  }

  // subscribe runs a subscription over a WebSocket with the
  // graphql-transport-ws protocol (the graphql-ws library's) and returns
  // its results as an async iterable, which GraphiQL shows one by one. A
  // browser cannot set headers on a WebSocket: the key travels in the
  // connection_init payload.
  function subscribe(params, opts) {
    var queue = [], waiting = null, done = false;
    function push(v) {
      if (done) return;
      if (waiting) { var w = waiting; waiting = null; w({ value: v, done: false }); }
      else queue.push(v);
    }
    function finish() {
      if (done) return;
      done = true;
      if (waiting) { var w = waiting; waiting = null; w({ value: undefined, done: true }); }
    }
    var payload = {};
    var key = input.value.trim();
    if (key) payload.Authorization = 'Token ' + key;
    var extra = (opts && opts.headers) || {};
    Object.keys(extra).forEach(function (name) {
      if (name.toLowerCase() === 'authorization') payload.Authorization = String(extra[name]);
    });
    var ws = new WebSocket(wsEndpoint(), 'graphql-transport-ws');
    document.body.setAttribute('data-sg-subscription', 'connecting');
    ws.onopen = function () {
      ws.send(JSON.stringify({ type: 'connection_init', payload: payload }));
    };
    ws.onmessage = function (ev) {
      var m;
      try { m = JSON.parse(ev.data); } catch (e) { return; }
      switch (m.type) {
        case 'connection_ack':
          ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: params }));
          document.body.setAttribute('data-sg-subscription', 'subscribed');
          break;
        case 'ping':
          ws.send(JSON.stringify({ type: 'pong' }));
          break;
        case 'next':
          push(m.payload);
          break;
        case 'error':
          push({ errors: m.payload });
          finish();
          ws.close(1000);
          break;
        case 'complete':
          finish();
          ws.close(1000);
          break;
      }
    };
    ws.onclose = function (ev) {
      document.body.setAttribute('data-sg-subscription', 'closed');
      if (!done && ev.code !== 1000) {
        push({ errors: [{ message: 'subscription closed by the server: ' + ev.code + (ev.reason ? ' ' + ev.reason : '') }] });
      }
      finish();
    };
    var it = {
      next: function () {
        if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
        if (done) return Promise.resolve({ value: undefined, done: true });
        return new Promise(function (resolve) { waiting = resolve; });
      },
      // GraphiQL calls return when the user stops the subscription.
      return: function () {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(JSON.stringify({ id: '1', type: 'complete' }));
          ws.close(1000);
        } else if (ws.readyState === WebSocket.CONNECTING) {
          ws.close();
        }
        finish();
        return Promise.resolve({ value: undefined, done: true });
      }
    };
    it[Symbol.asyncIterator] = function () { return it; };
    return it;
  }

  var root = ReactDOM.createRoot(mount);
  function render() {
    var props = {
      // A new fetcher identity makes GraphiQL re-run schema introspection,
      // which is what should happen after the key changed.
      fetcher: makeFetcher(),
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false
    };
    // `query` (not defaultQuery) so the example opens even when GraphiQL
    // restores tabs from localStorage: it selects or adds a matching tab.
    if (config.query) props.query = config.query;
    root.render(React.createElement(GraphiQL, props));
    document.body.setAttribute('data-sg-ready', 'true');
  }

  input.addEventListener('input', function () { storeKey(input.value.trim()); });
  input.addEventListener('change', render);
  render();
})();
