// lib.mjs -- what the browser tests share: Chromium through playwright-core
// (from web/node_modules, installed by make), console errors collected, a
// small PNG decoder for pixel checks of screenshots.
import { createRequire } from 'node:module';
import { inflateSync } from 'node:zlib';

const require = createRequire(new URL('../../web/package.json', import.meta.url));
export const { chromium } = require('playwright-core');

export const CHROMIUM = process.env.RT_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    // WebGL on the CPU (SwiftShader): no GPU on the test machines.
    '--enable-unsafe-swiftshader', '--use-angle=swiftshader'];

// A browser with a fresh profile in `profileDir`; returns the persistent context.
export async function launch(profileDir) {
    return chromium.launchPersistentContext(profileDir, {
        executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1400, height: 1000 },
    });
}

// Collects console errors and page errors of `page` into the returned array.
export function watchErrors(page) {
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
    return errors;
}

let failures = 0, passes = 0;
export function check(ok, what, detail = '') {
    if (ok) {
        passes++;
        console.log(`ok   ${what}`);
    } else {
        failures++;
        console.log(`FAIL ${what}${detail ? `: ${detail}` : ''}`);
    }
    return ok;
}
export function report(name) {
    console.log(`${name}: ${passes} passed, ${failures} failed`);
    return failures ? 1 : 0;
}

// Decodes an 8-bit RGB or RGBA PNG (what Chromium's screenshots are):
// {width, height, channels, data}.
export function decodePng(buf) {
    const sig = buf.subarray(0, 8).toString('hex');
    if (sig !== '89504e470d0a1a0a') throw new Error('not a PNG');
    let off = 8, width = 0, height = 0, depth = 0, type = 0;
    const idat = [];
    while (off < buf.length) {
        const len = buf.readUInt32BE(off), kind = buf.toString('latin1', off + 4, off + 8);
        const body = buf.subarray(off + 8, off + 8 + len);
        if (kind === 'IHDR') {
            width = body.readUInt32BE(0); height = body.readUInt32BE(4); depth = body[8]; type = body[9];
            if (body[12]) throw new Error('interlaced PNG');
        } else if (kind === 'IDAT') idat.push(body);
        else if (kind === 'IEND') break;
        off += 12 + len;
    }
    const ch = type === 6 ? 4 : type === 2 ? 3 : 0;
    if (depth !== 8 || !ch) throw new Error(`PNG type ${type} depth ${depth} not handled`);
    const raw = inflateSync(Buffer.concat(idat)), stride = width * ch;
    const data = Buffer.alloc(height * stride);
    for (let y = 0; y < height; y++) {
        const f = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
        const cur = data.subarray(y * stride, (y + 1) * stride), prev = y ? data.subarray((y - 1) * stride, y * stride) : null;
        for (let i = 0; i < stride; i++) {
            const a = i >= ch ? cur[i - ch] : 0, b = prev ? prev[i] : 0, c = prev && i >= ch ? prev[i - ch] : 0;
            let p;
            if (f === 0) p = 0;
            else if (f === 1) p = a;
            else if (f === 2) p = b;
            else if (f === 3) p = (a + b) >> 1;
            else {
                const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
                p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
            }
            cur[i] = (src[i] + p) & 255;
        }
    }
    return { width, height, channels: ch, data };
}
