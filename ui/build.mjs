// Bundles src/ into kubesched/ui/static/app.js and app.css (no CDN, nothing fetched at run time).
// The first line of app.js records a sha256 of the sources and the lock file: a Python test
// checks that the committed bundle was built from the committed sources.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const out = "../kubesched/ui/static";
export function sourceHash() {
  const h = createHash("sha256");
  const files = ["package.json", "package-lock.json", "build.mjs", ...readdirSync("src").sort().map((f) => join("src", f))];
  for (const f of files) {
    h.update(f + "\0");
    h.update(readFileSync(f));
  }
  return h.digest("hex");
}

const result = await build({
  entryPoints: ["src/main.jsx"],
  bundle: true,
  minify: !process.env.NOMINIFY, // NOMINIFY=1 npm run build: readable names in a browser profile (never commit it)
  format: "esm",
  target: "es2020",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: out,
  entryNames: "app",
  write: false,
  legalComments: "eof",
});
for (const f of result.outputFiles) {
  let text = f.text;
  if (f.path.endsWith(".js")) text = `/* kubesched-ui sources sha256 ${sourceHash()} */\n` + text;
  writeFileSync(f.path, text);
}
console.log("wrote", result.outputFiles.map((f) => f.path).join(", "));
