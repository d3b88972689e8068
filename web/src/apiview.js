// The viewer of the API description (/api.html): Swagger UI, from npm
// (swagger-ui-dist), reading the server's own OpenAPI document (the URL
// the page names in data-spec). Its "Try it out" sends the requests to
// this server, with the visitor's cookies. The server's own description,
// plain HTML, stays the page without JavaScript; once the viewer is shown
// it is hidden.
import 'swagger-ui-dist/swagger-ui.css';
import './apiview.css';
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-es-bundle.js';

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
    onComplete: () => {
      const doc = document.getElementById('description');
      if (doc) doc.hidden = true;
      // Swagger UI's list of operations is a landmark: it gets a name.
      document.querySelector('#swagger-ui main')?.setAttribute('aria-label', 'Operations');
      root.dataset.state = 'ready';
    },
  });
}
