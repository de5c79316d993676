// build.mjs OUTDIR -- bundles the page with esbuild into OUTDIR: one
// JavaScript and one CSS file named by their content hash (server/ui.c
// serves /ui/NAME with a year of caching, safe because a change changes the
// name), and OUTDIR/index.html naming them (served with no-cache).
// Run by deploy/web.sh at make time; the sources are web/src/.
import * as esbuild from 'esbuild';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
    console.error('usage: node web/build.mjs OUTDIR');
    process.exit(2);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await esbuild.build({
    entryPoints: [join(here, 'src/main.js')],
    bundle: true,
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'eof',
    entryNames: 'app-[hash]',
    outdir: out,
    metafile: true,
    logLevel: 'warning',
});
const names = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = names.find((n) => n.endsWith('.js'));
const css = names.find((n) => n.endsWith('.css'));
if (!js || !css) {
    console.error(`web: esbuild wrote ${names.join(', ')}: expected one .js and one .css`);
    process.exit(1);
}
const html = readFileSync(join(here, 'src/index.html'), 'utf8')
    .replace('@APP_JS@', `/ui/${js}`)
    .replace('@APP_CSS@', `/ui/${css}`);
writeFileSync(join(out, 'index.html'), html);
console.log(`web: ${readdirSync(out).sort().join(' ')} in ${out}`);
