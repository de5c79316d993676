// dom.js -- h(tag, attrs, ...children): one element, its attributes
// (on* keys add listeners, `hidden`/`disabled` booleans) and children
// (strings become text).
export function h(tag, attrs = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false) continue;
        if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else if (k === 'class') el.className = v;
        else if (v === true) el.setAttribute(k, '');
        else el.setAttribute(k, String(v));
    }
    for (const c of children.flat()) {
        if (c === undefined || c === null || c === false) continue;
        el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
}

export function fmt(x, digits = 3) {
    if (x === null || x === undefined) return '–';
    if (typeof x !== 'number') return String(x);
    if (x === 0) return '0';
    const a = Math.abs(x);
    if (a >= 1e4 || a < 1e-3) return x.toExponential(2);
    return x.toPrecision(digits).replace(/\.?0+$/, '');
}
