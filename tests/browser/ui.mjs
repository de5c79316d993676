// ui.mjs URL CLIP SHOT PROFILE_DIR -- the web page as a user drives it, on
// a daemon without auth at URL: the page loads with no console error; CLIP
// submitted through the form onto g1 finishes and its view opens; the
// canvas is not blank; one second of the page's clock at the clip's 30 fps
// plays 30 frames; the slider sets every robot joint to its row of the
// result CSV; the curves' current-frame line follows the slider and a
// worst-frame button seeks; the job view is saved as a screenshot SHOT
// (and the jobs list beside it, as ui-jobs.png). Then a trajectory job (that
// result as a g1 trajectory onto h1): its view draws the h1 beside the g1
// and poses the h1 from its own result (screenshot ui-job-traj.png).
import { dirname, join } from 'node:path';
import { check, decodePng, launch, report, watchErrors } from './lib.mjs';

const [url, clip, shot, profile] = process.argv.slice(2);
const ctx = await launch(profile);
const page = ctx.pages()[0] || (await ctx.newPage());
const errors = watchErrors(page);
const frameNo = async () => Number((await page.locator('#frame').textContent()).split('/')[0]);

try {
    await page.clock.install();
    await page.goto(url);
    await page.locator('#submit-form select[name=robot] option[value=g1]').waitFor({ state: 'attached' });
    check(await page.locator('#jobs-view').isVisible(), 'the jobs view shows');
    check(!(await page.locator('#token-view').isVisible()), 'no token asked without auth');

    await page.locator('#submit-form input[type=file]').setInputFiles(clip);
    await page.locator('#submit-form select[name=robot]').selectOption('g1');
    check(await page.locator('#submit-form select[name=kind]').inputValue() === 'bvh', 'a .bvh file selects the BVH kind');
    check(await page.locator('#submit-form select[name=kind] option[value=joints]').isDisabled(), 'the joint-positions kind is there, not yet enabled');
    await page.locator('#submit-form button[type=submit]').click();
    const row = page.locator('#jobs tr[data-state=succeeded]').first();
    await row.waitFor({ timeout: 180000 });
    const id = await row.getAttribute('data-job');
    check(Number(id) > 0, `job ${id} succeeded`, await page.locator('#jobs').innerText());

    await page.screenshot({ path: join(dirname(shot), 'ui-jobs.png') });
    await row.locator('a.open').click();
    await page.waitForFunction(() => window.__rt && window.__rt.ready, null, { timeout: 60000 });
    check(page.url().endsWith(`#/jobs/${id}`), 'its view opens', page.url());
    const n = await page.evaluate(() => window.__rt.frames());
    check(n === 125, `the view has the clip's 125 frames`, String(n));

    // The canvas against its clear colour (#f4f5f7): the scene drew something,
    // and the robot's orange and the source's blue are there.
    const img = decodePng(await page.locator('#scene canvas').screenshot());
    let differ = 0, orange = 0, blue = 0;
    for (let i = 0; i < img.data.length; i += img.channels) {
        const r = img.data[i], g = img.data[i + 1], b = img.data[i + 2];
        if (Math.abs(r - 0xf4) + Math.abs(g - 0xf5) + Math.abs(b - 0xf7) > 24) differ++;
        if (r > 180 && g > 50 && g < 140 && b < 80) orange++;
        if (b > 150 && r < 80 && g > 80 && g < 150) blue++;
    }
    const total = img.width * img.height;
    check(differ > total * 0.01, `the canvas is not blank (${differ} of ${total} pixels differ from the background)`);
    check(orange > 30, `the robot is drawn (${orange} robot-coloured pixels)`);
    check(blue > 30, `the source skeleton is drawn (${blue} source-coloured pixels)`);

    // Playback on the page's clock: paused, then one second run by hand.
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    const now = await page.evaluate(() => Date.now());
    await page.clock.pauseAt(now + 1000);
    const before = await frameNo();
    await page.keyboard.press('Space');
    check(await page.evaluate(() => window.__rt.playing()), 'space starts playing');
    await page.clock.runFor(1000);
    await page.keyboard.press('Space');
    const after = await frameNo();
    check(after - before === 30, `one second at 30 fps plays 30 frames (${before} -> ${after})`);
    await page.keyboard.press('ArrowRight');
    check(await frameNo() === after + 1, 'the right arrow steps one frame');
    await page.keyboard.press('ArrowLeft');
    check(await frameNo() === after, 'the left arrow steps back');

    // The slider against the result CSV.
    const csv = (await (await fetch(`${url}/v1/jobs/${id}/result.csv`)).text()).trim().split('\n');
    const cols = csv[0].split(',');
    for (const k of [40, 97]) {
        await page.locator('#slider').fill(String(k));
        const st = await page.evaluate(() => ({ f: window.__rt.frame(), joints: window.__rt.joints(), lines: window.__rt.plotLines() }));
        check(st.f === k && (await frameNo()) === k, `the slider shows frame ${k}`);
        const want = csv[1 + k].split(',').map(Number);
        let worst = 0, seen = 0, missing = [];
        for (let c = 7; c < cols.length; c++) {
            const got = st.joints[cols[c]];
            if (got === undefined) { missing.push(cols[c]); continue; }
            seen++;
            worst = Math.max(worst, Math.abs(got - want[c]));
        }
        check(seen === cols.length - 7 && worst <= 1e-6,
            `frame ${k}: all ${seen} robot joints equal row ${k} of result.csv (max difference ${worst})`, missing.join(' '));
        check(st.lines.length === 5 && st.lines.every((x) => Math.abs(x - k) < 0.5),
            `the ${st.lines.length} curves' current-frame lines are at frame ${k}`, JSON.stringify(st.lines));
    }
    const worstBtn = page.locator('[data-plot=velocity] button.worst');
    const wf = Number(await worstBtn.getAttribute('data-frame'));
    await worstBtn.click();
    check(await frameNo() === wf, `the velocity curve's worst-frame button seeks to frame ${wf}`);
    const box = await page.locator('[data-plot=error] .u-over').boundingBox();
    await page.mouse.click(box.x + box.width * 0.25, box.y + box.height / 2);
    const clicked = await frameNo();
    check(Math.abs(clicked - 0.25 * 124) <= 2, `a click a quarter into a curve seeks there (frame ${clicked})`);
    check((await page.locator('.downloads a').count()) === 4, 'download links: result.csv, result JSON, report, source');
    check(await page.locator('#report table.figures').isVisible(), "the report's figures show");

    await page.locator('#slider').fill('40');
    await page.screenshot({ path: shot, fullPage: true });

    // A trajectory job: the source is the g1 robot, drawn from its URDF.
    const sub = await fetch(`${url}/v1/jobs`, {
        method: 'POST',
        body: JSON.stringify({ robot: 'h1', source_robot: 'g1', name: 'jj_h1', trajectory: csv.join('\n') + '\n' }),
    });
    const tj = await sub.json();
    check(sub.status === 201, `a trajectory job (${tj.id}) is submitted`, JSON.stringify(tj));
    let st = tj.state;
    for (let i = 0; i < 600 && (st === 'queued' || st === 'running'); i++) {
        await new Promise((r) => setTimeout(r, 100));
        st = (await (await fetch(`${url}/v1/jobs/${tj.id}`)).json()).state;
    }
    check(st === 'succeeded', `it succeeds (${st})`);
    await page.clock.resume();
    await page.goto(`${url}/#/jobs/${tj.id}`);
    await page.waitForFunction(() => window.__rt && window.__rt.ready, null, { timeout: 60000 });
    await page.locator('#slider').fill('10');
    const hcsv = (await (await fetch(`${url}/v1/jobs/${tj.id}/result.csv`)).text()).trim().split('\n');
    const hcols = hcsv[0].split(','), hrow = hcsv[11].split(',').map(Number);
    const hj = await page.evaluate(() => window.__rt.joints());
    let hworst = 0, hseen = 0;
    for (let c = 7; c < hcols.length; c++) if (hj[hcols[c]] !== undefined) { hseen++; hworst = Math.max(hworst, Math.abs(hj[hcols[c]] - hrow[c])); }
    check(hseen === hcols.length - 7 && hworst <= 1e-6, `the h1's ${hseen} joints at frame 10 are its result's row 10 (max difference ${hworst})`);
    const himg = decodePng(await page.locator('#scene canvas').screenshot());
    let hblue = 0;
    for (let i = 0; i < himg.data.length; i += himg.channels) {
        const r = himg.data[i], g = himg.data[i + 1], b = himg.data[i + 2];
        if (b > 150 && r < 80 && g > 80 && g < 150) hblue++;
    }
    check(hblue > 30, `the source robot (g1) is drawn beside it (${hblue} source-coloured pixels)`);
    await page.screenshot({ path: join(dirname(shot), 'ui-job-traj.png') });
    check(errors.length === 0, 'no console errors', errors.join(' | '));
} catch (e) {
    check(false, 'the page test ran to the end', `${e.message}\n${errors.join('\n')}`);
}
await ctx.close();
process.exit(report('ui'));
