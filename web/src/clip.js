// clip.js -- a job's view: the robot and the source (a BVH skeleton through
// three's BVHLoader, or the source robot of a trajectory) side by side or
// overlaid on a ground plane with the feet's contacts marked; play/pause,
// a frame slider, speed, loop and the keyboard (space, arrows); the curves
// (plots.js) on the same timeline; the report's figures and warnings; the
// downloads. The renderer, scene, camera and controls are made once
// (mountClip); opening a job swaps the figures. The animation loop reads
// the clock, and sets transforms only when the frame changes.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import { BVHLoader } from 'three/examples/jsm/loaders/BVHLoader.js';
import { api, download, saveBlob, showError } from './api.js';
import { h, fmt } from './dom.js';
import { RobotFigure } from './figure.js';
import { Plots } from './plots.js';
import { computeCurves } from './series.js';

// The file extension of a job's source download, by its kind ("joints": the
// bytes as sent, .npz, .npy or CSV, named generically).
const SOURCE_EXT = { bvh: 'bvh', csv: 'csv', joints: 'joints' };

const ROBOT_COLOR = 0xe8590c, SOURCE_COLOR = 0x1971c2, CONTACT_COLOR = [0x2f9e44, 0x1971c2];
const SIDE_OFFSET = 1.0;   // m between robot and source, side by side
const tmp = new THREE.Vector3();

const v = {
    el: null, renderer: null, scene: null, camera: null, controls: null, zUp: null,
    robot: null, source: null, sourceKind: '', srcRows: null,
    bvh: null, mixer: null, skelHelper: null, srcGroup: null, srcFrameTime: 0,
    feet: [], markers: [], prints: null,
    job: null, result: null, n: 0, ft: 1 / 30, frame: -1,
    playing: false, startReal: 0, startHead: 0, head: 0, speed: 1, loop: true, overlay: false,
    ui: {}, plots: null, token: 0,
};

export function mountClip(el) {
    v.el = el;
    const canvasBox = h('div', { id: 'scene' });
    const ui = v.ui;
    ui.title = h('h1', {});
    ui.meta = h('p', { class: 'meta' });
    ui.play = h('button', { type: 'button', id: 'play', onclick: () => (v.playing ? pause() : play()) }, 'Play');
    ui.slider = h('input', { type: 'range', id: 'slider', min: 0, max: 0, step: 1, value: 0 });
    ui.slider.addEventListener('input', () => seek(Number(ui.slider.value)));
    ui.counter = h('span', { id: 'frame' }, '0 / 0');
    ui.time = h('span', { id: 'time' });
    ui.speed = h('select', { id: 'speed' }, ['0.25', '0.5', '1', '2', '4'].map((s) => h('option', { value: s, selected: s === '1' }, `${s}×`)));
    ui.speed.addEventListener('change', () => setSpeed(Number(ui.speed.value)));
    ui.loop = h('input', { type: 'checkbox', id: 'loop', checked: true });
    ui.loop.addEventListener('change', () => { v.loop = ui.loop.checked; });
    ui.overlay = h('select', { id: 'layout' }, h('option', { value: 'side' }, 'side by side'), h('option', { value: 'overlay' }, 'overlaid'));
    ui.overlay.addEventListener('change', () => { v.overlay = ui.overlay.value === 'overlay'; placeSource(); render(); });
    ui.frames = h('input', { type: 'checkbox', id: 'link-frames', checked: true });
    ui.frames.addEventListener('change', () => { if (v.robot) v.robot.showFrames(ui.frames.checked); render(); });
    ui.downloads = h('p', { class: 'downloads' });
    ui.report = h('div', { id: 'report' });
    const plotsBox = h('div', { id: 'plots' });
    el.append(
        h('p', {}, h('a', { href: '#/' }, '← jobs')), ui.title, ui.meta, canvasBox,
        h('div', { class: 'controls' }, ui.play, ui.slider, ui.counter, ui.time,
            h('label', {}, 'speed ', ui.speed), h('label', {}, ui.loop, ' loop'),
            h('label', {}, ui.overlay), h('label', {}, ui.frames, ' link frames'),
            h('span', { class: 'legend' }, h('i', { class: 'sw robot' }), 'robot ', h('i', { class: 'sw source' }), 'source ',
                h('i', { class: 'sw contact' }), 'foot contact'),
            h('span', { class: 'hint' }, 'space: play/pause, ←/→: a frame (shift: 10)')),
        plotsBox, h('h2', {}, 'Report'), ui.report, h('h2', {}, 'Downloads'), ui.downloads);

    v.renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
    v.renderer.setPixelRatio(window.devicePixelRatio);
    v.renderer.setClearColor(0xf4f5f7);
    canvasBox.append(v.renderer.domElement);
    v.scene = new THREE.Scene();
    v.camera = new THREE.PerspectiveCamera(40, 2, 0.05, 100);
    v.camera.position.set(2.6, 1.6, 3.2);
    v.controls = new OrbitControls(v.camera, v.renderer.domElement);
    v.controls.target.set(0, 0.8, 0);
    v.controls.addEventListener('change', render);
    v.scene.add(new THREE.HemisphereLight(0xffffff, 0x8d8d8d, 2.5));
    const sun = new THREE.DirectionalLight(0xffffff, 1.5);
    sun.position.set(3, 6, 4);
    v.scene.add(sun);
    const grid = new THREE.GridHelper(12, 24, 0x9aa0a6, 0xd0d4d9);
    v.scene.add(grid);
    const plane = new THREE.Mesh(new THREE.PlaneGeometry(12, 12), new THREE.MeshBasicMaterial({ color: 0xe9ecef, side: THREE.DoubleSide }));
    plane.rotation.x = -Math.PI / 2;
    plane.position.y = -0.001;
    v.scene.add(plane);
    // URDF is z-up; three is y-up: the robots live in this group.
    v.zUp = new THREE.Group();
    v.zUp.rotation.x = -Math.PI / 2;
    v.scene.add(v.zUp);
    for (let side = 0; side < 2; side++) {
        const m = new THREE.Mesh(new THREE.RingGeometry(0.05, 0.09, 32),
            new THREE.MeshBasicMaterial({ color: CONTACT_COLOR[side], side: THREE.DoubleSide }));
        m.rotation.x = -Math.PI / 2;
        m.visible = false;
        v.scene.add(m);
        v.markers.push(m);
    }
    new ResizeObserver(() => resize(canvasBox)).observe(canvasBox);
    v.plots = new Plots(plotsBox, (f) => seek(f));
    document.addEventListener('keydown', onKey);
    v.renderer.setAnimationLoop(tick);
    window.__rt = {
        ready: false,
        frame: () => v.frame,
        frames: () => v.n,
        playing: () => v.playing,
        joints: () => {
            const out = {};
            if (v.robot) for (const { joint } of v.robot.refs) out[joint.name] = joint.jointValue[0];
            return out;
        },
        plotLines: () => v.plots.lineFrames(),
    };
}

function resize(box) {
    const w = box.clientWidth, hgt = box.clientHeight;
    if (!w || !hgt) return;
    v.renderer.setSize(w, hgt, false);
    v.camera.aspect = w / hgt;
    v.camera.updateProjectionMatrix();
    render();
}

function render() {
    if (v.renderer) v.renderer.render(v.scene, v.camera);
}

function onKey(e) {
    if (v.el.hidden || !v.n) return;
    const t = e.target;
    const typing = t && (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'range' && t.type !== 'checkbox'));
    if (typing || (t && t.tagName === 'SELECT')) return;
    if (e.key === ' ') {
        e.preventDefault();
        v.playing ? pause() : play();
    } else if ((e.key === 'ArrowRight' || e.key === 'ArrowLeft') && t !== v.ui.slider) {
        e.preventDefault();
        const step = (e.key === 'ArrowRight' ? 1 : -1) * (e.shiftKey ? 10 : 1);
        seek(Math.max(0, Math.min(v.n - 1, v.frame + step)));
    }
}

// Frame of playhead time t (s); the epsilon keeps k * frame_time on frame k.
function frameAt(t) {
    return Math.floor(t / v.ft + 1e-6);
}

function play() {
    if (!v.n) return;
    if (v.frame >= v.n - 1) v.head = 0;
    v.playing = true;
    v.startReal = performance.now();
    v.startHead = v.head;
    v.ui.play.textContent = 'Pause';
}

function advance() {
    const t = v.startHead + ((performance.now() - v.startReal) / 1000) * v.speed;
    let f = frameAt(t);
    if (f > v.n - 1) {
        if (v.loop) {
            const period = v.n * v.ft;
            v.head = t % period;
            v.startHead = v.head;
            v.startReal = performance.now();
            f = frameAt(v.head);
        } else {
            v.head = (v.n - 1) * v.ft;
            f = v.n - 1;
            v.playing = false;
            v.ui.play.textContent = 'Play';
        }
    } else {
        v.head = t;
    }
    setFrame(f);
}

function pause() {
    if (v.playing) advance();
    v.playing = false;
    v.ui.play.textContent = 'Play';
}

function setSpeed(s) {
    if (v.playing) advance();
    v.startHead = v.head;
    v.startReal = performance.now();
    v.speed = s;
}

function seek(f) {
    v.head = f * v.ft;
    v.startHead = v.head;
    v.startReal = performance.now();
    setFrame(f);
}

function tick() {
    if (v.playing && v.n) advance();
}

// Shows frame f: the figures' transforms, the contact marks, the slider,
// the counter, the curves' line; then one render.
function setFrame(f) {
    if (!v.n) return;
    if (f === v.frame) return;
    v.frame = f;
    const row = v.result.trajectory[f];
    v.robot.pose(row);
    if (v.mixer) v.mixer.setTime(Math.min(f * v.ft, v.srcDuration));
    if (v.source && v.srcRows) v.source.pose(v.srcRows[Math.min(v.srcRows.length - 1, f)]);
    v.scene.updateMatrixWorld();
    v.robot.update();
    if (v.source) v.source.update();
    for (let side = 0; side < v.markers.length; side++) {
        const foot = v.feet[side], m = v.markers[side];
        m.visible = !!(foot && foot.contact[f] && v.robot.linkWorld(foot.link, tmp));
        if (m.visible) m.position.set(tmp.x, 0.002, tmp.z);
    }
    v.ui.slider.value = String(f);
    v.ui.counter.textContent = `${f} / ${v.n - 1}`;
    v.ui.time.textContent = `${(f * v.ft).toFixed(2)} s`;
    v.plots.setFrame(f);
    render();
}

function clearFigures() {
    if (v.robot) v.robot.dispose();
    if (v.source) v.source.dispose();
    if (v.srcGroup) v.srcGroup.removeFromParent();
    if (v.skelHelper) {
        v.skelHelper.removeFromParent();
        v.skelHelper.dispose();
    }
    if (v.prints) {
        v.prints.removeFromParent();
        v.prints.geometry.dispose();
    }
    v.robot = v.source = v.srcGroup = v.skelHelper = v.mixer = v.srcRows = v.prints = null;
    v.n = 0;
    v.frame = -1;
    v.playing = false;
    for (const m of v.markers) m.visible = false;
}

// Bounding box (three's frame) of the BVH bones now.
function bonesBox(box) {
    box.makeEmpty();
    for (const b of v.bvh.skeleton.bones) box.expandByPoint(tmp.setFromMatrixPosition(b.matrixWorld));
    return box;
}

// The BVH skeleton scaled to the robot's height, its feet on the ground,
// its root over the robot's root (overlaid) or beside it.
function placeSource() {
    if (v.srcGroup && v.bvh) {
        const g = v.srcGroup;
        g.position.set(0, 0, 0);
        g.rotation.set(0, 0, 0);
        g.scale.setScalar(1);
        v.mixer.setTime(0);
        g.updateMatrixWorld(true);
        const box = bonesBox(new THREE.Box3());
        const size = box.getSize(new THREE.Vector3());
        if (size.z > 1.2 * size.y) g.rotation.x = -Math.PI / 2;   // a z-up clip
        g.updateMatrixWorld(true);
        bonesBox(box);
        box.getSize(size);
        v.robot.pose(v.result.trajectory[0]);
        v.scene.updateMatrixWorld();
        const rbox = new THREE.Box3();
        for (const l of v.robot.links) rbox.expandByPoint(tmp.setFromMatrixPosition(l.matrixWorld));
        const rsize = rbox.getSize(new THREE.Vector3());
        const scale = size.y > 0 ? rsize.y / size.y : 1;
        g.scale.setScalar(scale);
        g.updateMatrixWorld(true);
        bonesBox(box);
        const root = tmp.setFromMatrixPosition(v.bvh.skeleton.bones[0].matrixWorld).clone();
        const rroot = new THREE.Vector3().setFromMatrixPosition(v.robot.robot.matrixWorld);
        g.position.set(rroot.x - root.x, -box.min.y, rroot.z - root.z + (v.overlay ? 0 : -SIDE_OFFSET));
    }
    if (v.source) v.source.offset.position.y = v.overlay ? 0 : SIDE_OFFSET; // robot frame: +y is left
    const f = v.frame;
    v.frame = -1;
    if (f >= 0) setFrame(f);
}

// Every foot contact of the clip as a faint dot on the ground (once per job).
function footprints() {
    const pos = [], col = [];
    const colors = CONTACT_COLOR.map((c) => new THREE.Color(c));
    for (let f = 0; f < v.n && f < 20000; f++) {
        if (!v.feet.some((ft) => ft.contact[f])) continue;
        v.robot.pose(v.result.trajectory[f]);
        v.zUp.updateMatrixWorld(true);
        v.feet.forEach((ft, side) => {
            if (!ft.contact[f] || !v.robot.linkWorld(ft.link, tmp)) return;
            pos.push(tmp.x, 0.001, tmp.z);
            col.push(colors[side % 2].r, colors[side % 2].g, colors[side % 2].b);
        });
    }
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.Float32BufferAttribute(pos, 3));
    g.setAttribute('color', new THREE.Float32BufferAttribute(col, 3));
    v.prints = new THREE.Points(g, new THREE.PointsMaterial({ size: 4, sizeAttenuation: false, vertexColors: true, transparent: true, opacity: 0.35 }));
    v.scene.add(v.prints);
}

// Points the camera at both figures as they stand in the first frame.
function frameCamera() {
    const box = new THREE.Box3();
    for (const l of v.robot.links) box.expandByPoint(tmp.setFromMatrixPosition(l.matrixWorld));
    if (v.bvh) box.union(bonesBox(new THREE.Box3()));
    if (v.source) for (const l of v.source.links) box.expandByPoint(tmp.setFromMatrixPosition(l.matrixWorld));
    if (box.isEmpty()) return;
    const c = box.getCenter(new THREE.Vector3()), size = box.getSize(new THREE.Vector3());
    const dist = 1.0 + 1.5 * Math.max(size.x, size.y, size.z);
    v.controls.target.copy(c);
    v.camera.position.copy(c).add(new THREE.Vector3(0.75, 0.3, 0.6).normalize().multiplyScalar(dist));
    v.controls.update();
    render();
}

function parseCsv(text, names) {
    const lines = text.split(/\r?\n/).filter((l) => l.trim());
    let columns = ['root_x', 'root_y', 'root_z', 'root_qx', 'root_qy', 'root_qz', 'root_qw', ...names];
    if (lines.length && /[A-Za-z_]/.test(lines[0].split(',')[0])) columns = lines.shift().split(',').map((s) => s.trim());
    return { columns, rows: lines.map((l) => l.split(',').map(Number)) };
}

function renderReport(job, report) {
    const q = report.quality || {};
    const s = report.solver || {};
    const stat = (o) => (o ? `${fmt(o.mean)} / ${fmt(o.p95)} / ${fmt(o.max)}` : '–');
    const rows = [
        ['position error (m), mean / p95 / max', stat(q.position_error_m)],
        ['rotation error (°), mean / p95 / max', stat(q.rotation_error_deg)],
        ['joint-limit violations', q.joint_limit_violations],
        ['frames at a limit', q.frames_at_limit],
        ['max joint velocity (rad/s)', fmt(q.max_joint_velocity_rad_s)],
        ['mean jerk (rad/s³)', fmt(q.mean_jerk)],
        ['foot slide (m)', fmt(q.foot_slide_m)],
        ['ground penetration (m)', fmt(q.ground_penetration_m)],
        ['contact frames', q.contact_frames],
        ['solver', `${s.backend}, ${s.mode}, ${s.lm_iterations} LM / ${s.cg_iterations} CG iterations, ${s.termination}`],
        ['cost', `${fmt(s.initial_cost)} → ${fmt(s.final_cost)}`],
        ['profile', report.profile ?? 'shared links'],
        ['frames', `${report.frames} at ${fmt(1 / report.frame_time)} fps`],
    ];
    const warnings = report.warnings || [];
    v.ui.report.replaceChildren(
        warnings.length ? h('ul', { class: 'warnings' }, warnings.map((w) => h('li', {}, typeof w === 'string' ? w : JSON.stringify(w))))
            : h('p', { class: 'ok' }, 'No warnings.'),
        h('table', { class: 'figures' }, rows.map(([k, val]) => h('tr', {}, h('th', {}, k), h('td', {}, val ?? '–')))));
}

function renderDownloads(job, report) {
    const base = `/v1/jobs/${job.id}`;
    const link = (label, path, name) => h('a', {
        href: path, download: name,
        onclick: (e) => { e.preventDefault(); download(path, name).catch(() => {}); },
    }, label);
    v.ui.downloads.replaceChildren(
        link('result.csv', `${base}/result.csv`, `${job.name}.csv`), ' · ',
        link('result JSON', `${base}/result`, `${job.name}.result.json`), ' · ',
        h('a', {
            href: '#', onclick: (e) => {
                e.preventDefault();
                saveBlob(new Blob([JSON.stringify(report, null, 1)], { type: 'application/json' }), `${job.name}.report.json`);
            },
        }, 'report'), ' · ',
        link('source', `${base}/source`, `${job.name}.${SOURCE_EXT[job.source] ?? 'bvh'}`));
}

// Opens job `id`: fetches the job, its result with series, the robot's
// URDF and the source; builds the figures and the curves.
export async function openJob(id) {
    const token = ++v.token;
    window.__rt.ready = false;
    clearFigures();
    v.plots.clear();
    v.ui.title.textContent = `Job ${id}`;
    v.ui.meta.textContent = 'loading…';
    let job, result, urdf, source, srcUrdf = null;
    try {
        job = await api(`/v1/jobs/${id}`);
        if (job.state !== 'succeeded') {
            v.ui.meta.textContent = `${job.state}: there is no result to show.`;
            return;
        }
        // Joint positions (.npz, .npy, CSV) have no figure here: only the robot is drawn.
        [result, urdf, source] = await Promise.all([
            api(`/v1/jobs/${id}/result?series=1`),
            api(`/v1/robots/${encodeURIComponent(job.robot)}/urdf`, { as: 'text' }),
            job.source === 'joints' ? null : api(`/v1/jobs/${id}/source`, { as: 'text' }),
        ]);
        if (job.source === 'csv') srcUrdf = await api(`/v1/robots/${encodeURIComponent(job.source_robot)}/urdf`, { as: 'text' });
    } catch {
        v.ui.meta.textContent = 'could not load the job.';
        return;
    }
    if (token !== v.token) return;   // another job was opened meanwhile
    v.job = job;
    v.result = result;
    v.n = result.frames;
    v.ft = result.report.frame_time > 0 ? result.report.frame_time : 1 / 30;
    v.ui.title.textContent = `${job.name} (job ${job.id})`;
    const what = job.source === 'csv' ? `${job.source_robot} trajectory` : job.source === 'joints' ? 'joint positions' : 'BVH clip';
    v.ui.meta.textContent = `${what} onto ${job.robot}` +
        `, profile ${job.profile ?? result.report.profile ?? 'shared links'}, ${v.n} frames at ${fmt(1 / v.ft)} fps`;
    try {
        v.robot = new RobotFigure(urdf, ROBOT_COLOR);
        v.robot.setColumns(result.columns);
        v.robot.addTo(v.zUp, v.scene);
        v.robot.showFrames(v.ui.frames.checked);
        if (job.source === 'csv') {
            v.source = new RobotFigure(srcUrdf, SOURCE_COLOR);
            const csv = parseCsv(source, v.source.movableJointNames());
            v.source.setColumns(csv.columns);
            v.srcRows = csv.rows;
            v.source.showFrames(false);
            v.source.addTo(v.zUp, v.scene);
        } else if (job.source !== 'joints') {
            v.bvh = new BVHLoader().parse(source);
            v.srcGroup = new THREE.Group();
            v.srcGroup.add(v.bvh.skeleton.bones[0]);
            v.scene.add(v.srcGroup);
            v.skelHelper = new THREE.SkeletonHelper(v.bvh.skeleton.bones[0]);
            v.skelHelper.setColors(new THREE.Color(SOURCE_COLOR), new THREE.Color(SOURCE_COLOR));
            v.skelHelper.material.depthTest = false;
            v.skelHelper.material.linewidth = 2;
            v.scene.add(v.skelHelper);
            v.mixer = new THREE.AnimationMixer(v.bvh.skeleton.bones[0]);
            v.mixer.clipAction(v.bvh.clip).play();
            v.srcDuration = v.bvh.clip.duration;
        }
    } catch (e) {
        showError(e);
    }
    v.feet = (result.series && result.series.feet) || [];
    const limits = {};
    for (const j of Object.values(v.robot ? v.robot.joints : {}))
        if (j.jointType === 'revolute' || j.jointType === 'prismatic') limits[j.name] = { lower: j.limit.lower, upper: j.limit.upper };
    v.ui.slider.max = String(v.n - 1);
    renderReport(job, result.report);
    renderDownloads(job, result.report);
    v.plots.setCurves(computeCurves(result, limits), v.n);
    v.head = 0;
    if (v.robot) footprints();
    placeSource();
    setFrame(0);
    frameCamera();
    window.__rt.ready = true;
}

export function closeJob() {
    pause();
}
