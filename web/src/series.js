// series.js -- the per-frame curves of a result: from the trajectory
// (joint angles against their limits, joint velocity, jerk) and from the
// daemon's ?series=1 (per-link position error, foot heights and contacts).
// Each curve set is {title, unit, names, ys: [Float64Array|Array], worst}
// where worst = {frame, name, value, what} is the frame to jump to.

// Frame and series of the largest (sign 1) or smallest (sign -1) value.
function extreme(names, ys, sign) {
    let best = null;
    ys.forEach((y, k) => {
        for (let f = 0; f < y.length; f++) {
            const v = y[f];
            if (v === null || Number.isNaN(v)) continue;
            if (!best || sign * v > sign * best.value) best = { frame: f, name: names[k], value: v };
        }
    });
    return best;
}

// result: GET /v1/jobs/ID/result?series=1; limits: joint name -> {lower, upper, type}.
export function computeCurves(result, limits) {
    const n = result.frames, cols = result.columns, tr = result.trajectory;
    const dt = result.report.frame_time > 0 ? result.report.frame_time : 1 / 30;
    const jointCols = [];
    for (let c = 7; c < cols.length; c++) jointCols.push(c);
    const jointNames = jointCols.map((c) => cols[c]);
    const curves = [];

    const s = result.series || { links: [], feet: [] };
    const linkNames = [], linkYs = [];
    for (const l of s.links) {
        if (!l.position_error_m.some((v) => v !== null)) continue;
        linkNames.push(l.link);
        linkYs.push(l.position_error_m);
    }
    curves.push({ id: 'error', title: 'Position error per tracked link', unit: 'm', names: linkNames, ys: linkYs,
        worst: { what: 'largest error', ...extreme(linkNames, linkYs, 1) } });

    // Angles as the fraction of their range: 0 at the lower limit, 1 at the upper.
    const limNames = [], limYs = [];
    jointCols.forEach((c, k) => {
        const lim = limits[jointNames[k]];
        if (!lim || !(lim.upper > lim.lower)) return;
        const y = new Float64Array(n);
        for (let f = 0; f < n; f++) y[f] = (tr[f][c] - lim.lower) / (lim.upper - lim.lower);
        limNames.push(jointNames[k]);
        limYs.push(y);
    });
    // Worst: the joint closest to (or past) either limit.
    const margin = limYs.map((y) => y.map((v) => Math.min(v, 1 - v)));
    const w = extreme(limNames, margin, -1);
    curves.push({ id: 'limits', title: 'Joint angles within their limits (0 = lower, 1 = upper)', unit: 'of range',
        names: limNames, ys: limYs, bands: [0, 1],
        worst: w && { what: 'closest to a limit', ...w, value: limYs[limNames.indexOf(w.name)][w.frame] } });

    const vel = jointCols.map((c) => {
        const y = new Float64Array(n);
        for (let f = 0; f + 1 < n; f++) y[f] = Math.abs(tr[f + 1][c] - tr[f][c]) / dt;
        if (n > 1) y[n - 1] = y[n - 2];
        return y;
    });
    curves.push({ id: 'velocity', title: 'Joint velocity |dq/dt|', unit: 'rad/s', names: jointNames, ys: vel,
        worst: { what: 'fastest', ...extreme(jointNames, vel, 1) } });

    const jerk = jointCols.map((c) => {
        const y = new Array(n).fill(null);
        for (let f = 0; f + 3 < n; f++)
            y[f] = Math.abs(tr[f + 3][c] - 3 * tr[f + 2][c] + 3 * tr[f + 1][c] - tr[f][c]) / (dt * dt * dt);
        return y;
    });
    curves.push({ id: 'jerk', title: 'Joint jerk |d³q/dt³|', unit: 'rad/s³', names: jointNames, ys: jerk,
        worst: { what: 'largest jerk', ...extreme(jointNames, jerk, 1) } });

    const footNames = s.feet.map((f) => `${f.side} sole (${f.link})`);
    const footYs = s.feet.map((f) => f.height_m);
    curves.push({ id: 'feet', title: 'Foot sole height, contact shaded', unit: 'm', names: footNames, ys: footYs,
        contacts: s.feet.map((f) => f.contact), legend: true, colors: ['#2f9e44', '#1971c2'],
        worst: { what: 'lowest sole', ...extreme(footNames, footYs, -1) } });
    for (const c of curves) if (c.worst && c.worst.frame === undefined) c.worst = null;
    return curves;
}
