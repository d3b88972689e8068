// The viewer of the API description (/api.html): Swagger UI, from npm
// (swagger-ui-dist), reading the server's own OpenAPI document (the URL
// the page names in data-spec). Its "Try it out" sends the requests to
// this server, with the visitor's cookies. The server's own description,
// plain HTML, stays the page without JavaScript; once the viewer is shown
// it is hidden.
import 'swagger-ui-dist/swagger-ui.css';
import './apiview.css';
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-es-bundle.js';

let current;
/** session resolves to who is signed in ({login, csrf_token}, as GET
 * /session.json says), or null for a visitor; asked once, when a request
 * that changes state is tried. */
function session() {
  current ??= fetch('/session.json?optional=1', {
    credentials: 'same-origin',
    headers: { Accept: 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
  }).then((res) => (res.status === 200 ? res.json() : null), () => null);
  return current;
}

const root = document.getElementById('swagger-ui');
if (root) {
  SwaggerUIBundle({
    url: new URL(root.dataset.spec, location.href).href,
    domNode: root,
    deepLinking: true,
    // No badge asking swagger.io to validate the document (another origin).
    validatorUrl: null,
    tryItOutEnabled: false,
    withCredentials: true,
    // As the application's pages ask: no Basic prompt on a 401, and the
    // session's CSRF token on a request that changes state.
    requestInterceptor: async (req) => {
      req.headers['X-Requested-With'] = 'XMLHttpRequest';
      if (!['GET', 'HEAD'].includes((req.method || 'GET').toUpperCase())) {
        const s = await session();
        if (s?.csrf_token) req.headers['X-CSRF-Token'] = s.csrf_token;
      }
      return req;
    },
    onComplete: () => {
      const doc = document.getElementById('description');
      if (doc) doc.hidden = true;
      // Swagger UI's list of operations is a landmark: it gets a name.
      document.querySelector('#swagger-ui main')?.setAttribute('aria-label', 'Operations');
      root.dataset.state = 'ready';
    },
  });
}
