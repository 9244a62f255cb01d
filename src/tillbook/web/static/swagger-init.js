/* Starts Swagger UI on /docs (the bundle from fastapi-offline, served from
   /docs-assets) over the service's OpenAPI document: the settings FastAPI's own
   page writes inline, in a file, so the page needs no inline script. */
(function () {
  "use strict";
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
})();
