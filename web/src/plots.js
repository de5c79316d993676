// plots.js -- the curves under the scene (uPlot), one chart per curve set
// of series.js, all on the clip's frame axis: a click seeks to that frame,
// a line marks the current frame, a button jumps to the curve's worst
// frame. setFrame() moves the lines only.
import uPlot from 'uplot';
import { fmt, h } from './dom.js';

const CONTACT_FILL = ['rgba(47,158,68,0.16)', 'rgba(25,113,194,0.16)'];

// An axis label: short (1.5k, 0.02).
function tick(x) {
    const a = Math.abs(x);
    if (a >= 1e6) return `${+(x / 1e6).toFixed(1)}M`;
    if (a >= 1e3) return `${+(x / 1e3).toFixed(1)}k`;
    return String(+x.toPrecision(3));
}

function color(k, n) {
    return `hsl(${Math.round((360 * k) / Math.max(n, 1))}, 65%, 45%)`;
}

export class Plots {
    // el: the container; onSeek(frame) when a chart or a worst-frame button is clicked.
    constructor(el, onSeek) {
        this.el = el;
        this.onSeek = onSeek;
        this.charts = [];   // {u, line, box}
        this.frame = 0;
        this.ro = new ResizeObserver(() => this.resize());
        this.ro.observe(el);
    }

    clear() {
        for (const c of this.charts) c.u.destroy();
        this.charts = [];
        this.el.replaceChildren();
    }

    // curves: series.js computeCurves(); n: frames.
    setCurves(curves, n) {
        this.clear();
        const xs = new Float64Array(n);
        for (let i = 0; i < n; i++) xs[i] = i;
        for (const cv of curves) {
            const box = h('div', { class: 'plot', 'data-plot': cv.id });
            const head = h('div', { class: 'plot-head' }, h('b', {}, cv.title), ` (${cv.unit})`);
            if (cv.worst) {
                head.append(' ', h('button', {
                    type: 'button', class: 'worst', 'data-frame': cv.worst.frame,
                    onclick: () => this.onSeek(cv.worst.frame),
                }, `worst: frame ${cv.worst.frame}`), h('span', { class: 'worst-what' },
                    ` ${cv.worst.what}: ${cv.worst.name} ${fmt(cv.worst.value)}`));
            }
            if (!cv.names.length) head.append(h('span', { class: 'empty' }, ' — nothing to plot'));
            const target = h('div', { class: 'plot-body' });
            box.append(head, target);
            this.el.append(box);
            const contacts = cv.contacts;
            const bands = cv.bands;
            const opts = {
                width: Math.max(200, target.clientWidth || this.el.clientWidth / 2 - 20),
                height: 150,
                scales: { x: { time: false } },
                legend: { show: !!cv.legend, live: false },
                cursor: { drag: { x: false, y: false, setScale: false }, points: { show: false } },
                axes: [{ size: 30 }, { size: 50, values: (u, vals) => vals.map(tick) }],
                series: [{ label: 'frame' }, ...cv.names.map((name, k) => ({
                    label: name, stroke: (cv.colors && cv.colors[k]) || color(k, cv.names.length), width: 1, points: { show: false },
                }))],
                hooks: {
                    drawClear: [(u) => {
                        const { ctx } = u;
                        const top = u.bbox.top, height = u.bbox.height;
                        if (contacts) contacts.forEach((c, side) => {
                            ctx.fillStyle = CONTACT_FILL[side % 2];
                            let start = -1;
                            for (let f = 0; f <= c.length; f++) {
                                const on = f < c.length && c[f];
                                if (on && start < 0) start = f;
                                if (!on && start >= 0) {
                                    const x0 = u.valToPos(start - 0.5, 'x', true), x1 = u.valToPos(f - 0.5, 'x', true);
                                    const half = height / contacts.length;
                                    ctx.fillRect(x0, top + side * half, x1 - x0, half);
                                    start = -1;
                                }
                            }
                        });
                    }],
                    draw: [(u) => {
                        if (!bands) return;
                        const { ctx } = u;
                        ctx.save();
                        ctx.strokeStyle = 'rgba(224,49,49,0.8)';
                        ctx.setLineDash([4, 4]);
                        for (const b of bands) {
                            const y = u.valToPos(b, 'y', true);
                            ctx.beginPath();
                            ctx.moveTo(u.bbox.left, y);
                            ctx.lineTo(u.bbox.left + u.bbox.width, y);
                            ctx.stroke();
                        }
                        ctx.restore();
                    }],
                },
            };
            const u = new uPlot(opts, [xs, ...cv.ys], target);
            const line = h('div', { class: 'frame-line' });
            u.over.append(line);
            u.over.addEventListener('click', (e) => {
                const f = Math.round(u.posToVal(e.offsetX, 'x'));
                this.onSeek(Math.max(0, Math.min(n - 1, f)));
            });
            this.charts.push({ u, line, target });
        }
        this.setFrame(this.frame);
    }

    setFrame(f) {
        this.frame = f;
        for (const c of this.charts) c.line.style.left = `${c.u.valToPos(f, 'x')}px`;
    }

    // The frame under each chart's current-frame line (for the browser test).
    lineFrames() {
        return this.charts.map((c) => c.u.posToVal(parseFloat(c.line.style.left), 'x'));
    }

    resize() {
        for (const c of this.charts) {
            const w = c.target.clientWidth;
            if (w > 0 && Math.abs(w - c.u.width) > 2) c.u.setSize({ width: w, height: 150 });
        }
        this.setFrame(this.frame);
    }
}
