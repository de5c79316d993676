// main.js -- the page: asks for a token when the daemon wants one (kept in
// sessionStorage for the tab), shows who it is, and routes between the
// jobs view (#/) and a job's view (#/jobs/ID).
import 'uplot/dist/uPlot.min.css';
import './style.css';
import { api, showError } from './api.js';
import { closeJob, mountClip, openJob } from './clip.js';
import { loadAssets, mountJobs, refreshJobs, stopPolling } from './jobs.js';
import { store } from './store.js';

const $ = (id) => document.getElementById(id);
let clipMounted = false, jobsMounted = false;

function showOnly(id) {
    for (const v of ['token-view', 'jobs-view', 'job-view']) $(v).hidden = v !== id;
}

async function route() {
    const st = store.get();
    if (st.auth && !st.token) {
        stopPolling();
        showOnly('token-view');
        $('token-input').focus();
        return;
    }
    const m = location.hash.match(/^#\/jobs\/(\d+)$/);
    if (m) {
        stopPolling();
        showOnly('job-view');
        if (!clipMounted) {
            mountClip($('job-view'));
            clipMounted = true;
        }
        await openJob(Number(m[1]));
        return;
    }
    if (clipMounted) closeJob();
    showOnly('jobs-view');
    if (!jobsMounted) {
        mountJobs($('jobs-view'));
        jobsMounted = true;
    }
    await refreshJobs();
}

// Who the token is, the robots and profiles; then the view. Without a
// token where one is needed, the token view (nothing is asked unsigned).
async function start() {
    if (store.get().auth && !store.get().token) {
        await route();
        return;
    }
    try {
        const who = await api('/v1/token');
        store.set({ who });
        await loadAssets();
    } catch {
        if (!store.get().token && store.get().auth) await route();
        return;
    }
    await route();
}

function renderChrome(st) {
    $('error').hidden = !st.error;
    $('error-text').textContent = st.error;
    const hl = st.health;
    $('health').textContent = hl ? `backend ${hl.backend}, ${hl.queued} queued${hl.auth ? '' : ', no auth'}` : '';
    $('who').textContent = st.who ? `${st.who.name}${st.who.admin ? ' (admin)' : ''}` : '';
    $('signout').hidden = !(st.auth && st.token);
}

async function main() {
    store.subscribe(renderChrome);
    $('error-close').addEventListener('click', () => store.set({ error: '' }));
    $('signout').addEventListener('click', () => {
        store.set({ token: '', who: null, jobs: [] });
        route();
    });
    $('token-form').addEventListener('submit', async (e) => {
        e.preventDefault();
        store.set({ token: $('token-input').value.trim(), error: '' });
        $('token-input').value = '';
        await start();
    });
    window.addEventListener('hashchange', () => route().catch(showError));
    try {
        const health = await api('/v1/health');
        store.set({ health, auth: health.auth });
    } catch {
        return;
    }
    await start();
}

main();
