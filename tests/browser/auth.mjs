// auth.mjs URL USER_TOKEN ADMIN_TOKEN JOB_ID PROFILE_DIR -- the page on a
// daemon with auth: it asks for the token, then lists the token's jobs
// (JOB_ID, submitted beforehand); the token is kept for the tab (a reload
// does not ask again); a user sees no admin actions, an admin does.
import { check, launch, report, watchErrors } from './lib.mjs';

const [url, user, admin, jobId, profile] = process.argv.slice(2);
const ctx = await launch(profile);
let errors = [];

async function signIn(page, token, waitFor) {
    await page.goto(url);
    await page.locator('#token-view').waitFor({ state: 'visible' });
    check(!(await page.locator('#jobs-view').isVisible()), 'the page asks for the token before anything else');
    await page.locator('#token-input').fill(token);
    await page.locator('#token-form button').click();
    await page.locator(waitFor).first().waitFor({ timeout: 30000 });
}

try {
    const page = ctx.pages()[0] || (await ctx.newPage());
    errors = watchErrors(page);
    await signIn(page, user, `#jobs tr[data-job="${jobId}"]`);
    check(true, `with the token it lists the jobs (job ${jobId})`);
    check((await page.locator('#who').textContent()).startsWith('bob'), 'it names the token', await page.locator('#who').textContent());
    check(!(await page.locator('#admin').isVisible()), 'a user token sees no admin actions');
    await page.reload();
    await page.locator(`#jobs tr[data-job="${jobId}"]`).waitFor({ timeout: 30000 });
    check(!(await page.locator('#token-view').isVisible()), 'after a reload the tab still has the token');
    await page.locator('#signout').click();
    await page.locator('#token-view').waitFor({ state: 'visible' });
    check(true, '"Forget token" asks for it again');
    check(errors.length === 0, 'no console errors', errors.join(' | '));

    const page2 = await ctx.newPage();   // a new tab: sessionStorage is per tab
    await signIn(page2, admin, '#jobs td.empty');
    check(await page2.locator('#admin').isVisible(), 'an admin token sees the robot and profile uploads');
    check(await page2.locator(`#jobs tr[data-job="${jobId}"]`).count() === 0, "another token's job is not listed");
} catch (e) {
    check(false, 'the auth test ran to the end', `${e.message}\n${errors.join('\n')}`);
}
await ctx.close();
process.exit(report('auth'));
