// Turns the OpenAPI document the server serves into the committed TypeScript
// types (src/generated/openapi.ts). Shared by the `generate` script and the
// test that fails when the committed file is stale.

import openapiTS, { astToString } from "openapi-typescript";

export const GENERATED_PATH = new URL("../src/generated/openapi.ts", import.meta.url);

const HEADER = `// Generated from the OpenAPI document Idem serves at GET /openapi.json.
// Do not edit: run \`npm run generate\` (it starts the server binary named by
// IDEM_BIN, or takes --url) and commit the result.
/* eslint-disable */
`;

/** The generated module's text for a parsed OpenAPI document. */
export async function typesFor(document) {
  const ast = await openapiTS(document, { alphabetize: true });
  return HEADER + "\n" + astToString(ast);
}
