// store.js -- the page's state in one object, and who wants to know when
// it changes. The token lives in sessionStorage: asked for once, kept for
// the tab, gone when the tab closes.
const TOKEN_KEY = 'retargetd.token';

const state = {
    token: sessionStorage.getItem(TOKEN_KEY) || '',
    auth: null,        // GET /v1/health .auth: null until known
    who: null,         // GET /v1/token: {name, admin, auth}
    health: null,
    robots: [],
    profiles: [],
    jobs: [],
    error: '',
};
const listeners = new Set();

export const store = {
    get: () => state,
    set(patch) {
        Object.assign(state, patch);
        if ('token' in patch) {
            if (patch.token) sessionStorage.setItem(TOKEN_KEY, patch.token);
            else sessionStorage.removeItem(TOKEN_KEY);
        }
        for (const f of listeners) f(state, patch);
    },
    // f(state, patch) after every set(); returns the unsubscribe function.
    subscribe(f) {
        listeners.add(f);
        return () => listeners.delete(f);
    },
};
