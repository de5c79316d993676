// api.js -- every call of the HTTP API goes through here: the token is
// added, a reply that is not 2xx becomes an ApiError that is also shown
// in the page's error banner ({"error":{"code","where","message"}} from the
// daemon), and a 401 asks for the token again.
import { store } from './store.js';

export class ApiError extends Error {
    constructor(status, code, where, message) {
        super(`${status} ${code}${where ? ` (${where})` : ''}: ${message}`);
        this.status = status;
        this.code = code;
        this.where = where;
    }
}

export function showError(err) {
    store.set({ error: err instanceof Error ? err.message : String(err) });
}

// api(path, {method, body, headers, as}) -> the reply as JSON (as: 'json'),
// text ('text') or a Blob ('blob'). `body` that is not a string or Blob is
// sent as JSON. Throws ApiError (after showing it unless `quiet`).
export async function api(path, { method = 'GET', body, headers = {}, as = 'json', quiet = false } = {}) {
    const h = { ...headers };
    const token = store.get().token;
    if (token) h.Authorization = `Bearer ${token}`;
    let payload = body;
    if (body !== undefined && typeof body !== 'string' && !(body instanceof Blob)) {
        payload = JSON.stringify(body);
        h['Content-Type'] = 'application/json';
    }
    let res;
    try {
        res = await fetch(path, { method, headers: h, body: payload });
    } catch (e) {
        const err = new ApiError(0, 'unreachable', path, e.message || 'the daemon did not answer');
        if (!quiet) showError(err);
        throw err;
    }
    if (!res.ok) {
        let code = res.statusText || 'error', where = '', message = `${method} ${path}`;
        try {
            const j = await res.json();
            if (j && j.error) ({ code, where, message } = j.error);
        } catch { /* not JSON: keep the status line */ }
        const err = new ApiError(res.status, code, where, message);
        if (res.status === 401 && store.get().auth) store.set({ token: '', who: null });
        if (!quiet) showError(err);
        throw err;
    }
    if (as === 'text') return res.text();
    if (as === 'blob') return res.blob();
    return res.json();
}

// Saves `blob` as a file called `name` (a download the browser asks about).
export function saveBlob(blob, name) {
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// Downloads `path` with the token (a plain link would not send it).
export async function download(path, name) {
    saveBlob(await api(path, { as: 'blob' }), name);
}
