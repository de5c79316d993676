// jobs.js -- the jobs view: the token's jobs (state, progress while
// running, robot, profile, frames, error; cancel; open a finished one),
// the form that submits a clip, and for an admin the robot and profile
// uploads. The list is polled while a job is queued or running.
import { api } from './api.js';
import { h } from './dom.js';
import { store } from './store.js';

const KINDS = [
    { id: 'bvh', label: 'BVH clip (.bvh)', ext: ['.bvh'], ready: true },
    { id: 'trajectory', label: 'Robot trajectory (.csv)', ext: ['.csv'], ready: true },
    { id: 'joints', label: 'Joint positions (not yet accepted)', ext: ['.npz', '.json'], ready: false },
];

let root, tbody, pollTimer = 0;

function stem(name) {
    return name.replace(/^.*[\\/]/, '').replace(/\.[^.]*$/, '') || 'clip';
}

function options(sel, items, first) {
    sel.replaceChildren(...(first ? [h('option', { value: '' }, first)] : []),
        ...items.map((it) => h('option', { value: it.name }, it.name + (it.bundled ? '' : ' (uploaded)'))));
}

export async function loadAssets() {
    const [r, p] = await Promise.all([api('/v1/robots'), api('/v1/profiles')]);
    store.set({ robots: r.robots, profiles: p.profiles });
}

export async function refreshJobs() {
    clearTimeout(pollTimer);
    const j = await api('/v1/jobs?limit=100');
    store.set({ jobs: j.jobs });
    if (j.jobs.some((x) => x.state === 'queued' || x.state === 'running'))
        pollTimer = setTimeout(() => refreshJobs().catch(() => {}), 500);
}

function row(job) {
    const active = job.state === 'queued' || job.state === 'running';
    let progress = '';
    if (job.state === 'running') progress = `LM iteration ${job.progress.lm_iteration}`;
    else if (job.state === 'succeeded' && job.progress.cost !== null) progress = `cost ${job.progress.cost.toPrecision(4)}`;
    const err = job.error ? `${job.error.code}${job.error.where ? ` (${job.error.where})` : ''}: ${job.error.message}` : '';
    return h('tr', { 'data-job': job.id, 'data-state': job.state },
        h('td', {}, job.id),
        h('td', {}, job.state === 'succeeded' ? h('a', { href: `#/jobs/${job.id}`, class: 'open' }, job.name) : job.name),
        h('td', { class: `state ${job.state}` }, job.state),
        h('td', {}, progress),
        h('td', {}, job.robot),
        h('td', {}, job.profile ?? h('i', {}, job.source === 'csv' ? 'shared links / pair' : 'automatic')),
        h('td', { class: 'num' }, job.frames),
        h('td', { class: 'err' }, err),
        h('td', {}, active ? h('button', { type: 'button', class: 'cancel', onclick: () => cancel(job.id) }, 'Cancel') : ''));
}

async function cancel(id) {
    await api(`/v1/jobs/${id}`, { method: 'DELETE' });
    await refreshJobs();
}

function submitForm() {
    const kind = h('select', { name: 'kind' }, KINDS.map((k) => h('option', { value: k.id, disabled: !k.ready }, k.label)));
    const file = h('input', { type: 'file', name: 'file', accept: '.bvh,.csv,.npz,.json', required: true });
    const name = h('input', { type: 'text', name: 'name', placeholder: 'from the file name', size: 18 });
    const robot = h('select', { name: 'robot', required: true });
    const profile = h('select', { name: 'profile' });
    const srcRobot = h('select', { name: 'source_robot' });
    const srcLabel = h('label', { hidden: true }, 'source robot ', srcRobot);
    const status = h('span', { class: 'status' });
    const fill = (st) => {
        options(robot, st.robots);
        options(srcRobot, st.robots);
        options(profile, st.profiles, '(detect from the clip)');
    };
    fill(store.get());
    store.subscribe((st, patch) => { if ('robots' in patch || 'profiles' in patch) fill(st); });
    const syncKind = () => { srcLabel.hidden = kind.value !== 'trajectory'; };
    kind.addEventListener('change', syncKind);
    file.addEventListener('change', () => {
        const f = file.files[0];
        if (!f) return;
        const ext = f.name.slice(f.name.lastIndexOf('.')).toLowerCase();
        const k = KINDS.find((x) => x.ext.includes(ext) && x.ready);
        if (k) kind.value = k.id;
        syncKind();
    });
    const form = h('form', { id: 'submit-form' },
        h('label', {}, 'file ', file), h('label', {}, 'kind ', kind), srcLabel,
        h('label', {}, 'robot ', robot), h('label', {}, 'profile ', profile),
        h('label', {}, 'name ', name), h('button', { type: 'submit' }, 'Submit'), status);
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const f = file.files[0];
        if (!f) return;
        const text = await f.text();
        const body = { robot: robot.value, name: name.value || stem(f.name) };
        if (profile.value) body.profile = profile.value;
        if (kind.value === 'bvh') body.clip = text;
        else {
            body.trajectory = text;
            body.source_robot = srcRobot.value;
        }
        status.textContent = 'submitting…';
        try {
            const job = await api('/v1/jobs', { method: 'POST', body });
            status.textContent = `submitted job ${job.id}`;
            form.reset();
            syncKind();
            await refreshJobs();
        } catch {
            status.textContent = '';
        }
    });
    return form;
}

function uploadForm(kind) {
    const name = h('input', { type: 'text', required: true, placeholder: `${kind} name`, size: 14, pattern: '[A-Za-z0-9_.\\-]{1,64}' });
    const file = h('input', { type: 'file', required: true, accept: kind === 'robot' ? '.urdf,.xml' : '.json' });
    const status = h('span', { class: 'status' });
    const form = h('form', { class: 'upload', id: `upload-${kind}` },
        h('b', {}, kind === 'robot' ? 'Upload a robot (URDF)' : 'Upload a profile (JSON)'), ' ',
        name, file, h('button', { type: 'submit' }, 'Upload'), status);
    form.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        const text = await file.files[0].text();
        try {
            await api(`/v1/${kind === 'robot' ? 'robots' : 'profiles'}/${encodeURIComponent(name.value)}`, { method: 'PUT', body: text });
            status.textContent = `${name.value} uploaded`;
            form.reset();
            await loadAssets();
        } catch {
            status.textContent = '';
        }
    });
    return form;
}

export function mountJobs(el) {
    root = el;
    tbody = h('tbody');
    const admin = h('div', { id: 'admin', hidden: true }, h('h2', {}, 'Admin'), uploadForm('robot'), uploadForm('profile'));
    root.append(
        h('h1', {}, 'Jobs'),
        submitForm(),
        h('table', { id: 'jobs' },
            h('thead', {}, h('tr', {}, ['id', 'name', 'state', 'progress', 'robot', 'profile', 'frames', 'error', ''].map((t) => h('th', {}, t)))),
            tbody),
        h('p', { class: 'hint' }, 'Open a succeeded job by its name.'),
        admin);
    const render = (st) => {
        tbody.replaceChildren(...st.jobs.map(row));
        if (!st.jobs.length) tbody.append(h('tr', {}, h('td', { colspan: 9, class: 'empty' }, 'No jobs yet: submit a clip above.')));
        admin.hidden = !(st.who && st.who.admin);
    };
    store.subscribe((st, patch) => { if ('jobs' in patch || 'who' in patch) render(st); });
    render(store.get());
}

export function stopPolling() {
    clearTimeout(pollTimer);
}
