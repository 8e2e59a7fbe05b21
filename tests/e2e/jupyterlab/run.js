#!/usr/bin/env node
// End-to-end test of GradGuard in a real JupyterLab 4 with jupyterlab-lsp, driven through
// Debian's chromium with playwright-core.
//
//   node tests/e2e/jupyterlab/run.js
//
// The JupyterLab is the one in GRADGUARD_E2E_JUPYTER (a virtual environment where
// `pip install -e .[jupyter]` ran and client/jupyterlab's extension is installed;
// scripts/e2e_setup.sh makes $GRADGUARD_E2E_CACHE/jupyter-venv), started on a temporary copy of
// tests/e2e/workspace/seed_notebook.ipynb with no configuration of its own: jupyter-lsp must find
// GradGuard through its entry point. It checks, as a user sees them: the GG101 squiggle on
// `l.backward()` in the third cell, the hover there (Ctrl + mouse, jupyterlab-lsp's default), and
// the fixes applied in the editor by gradguard-jupyterlab ("GradGuard: Quick fix" from the cell's
// context menu: the suppression in the third cell, undone with Ctrl+Z; then Ctrl+.: the no_grad
// fix in the first cell), the squiggle gone, and the notebook saved runs clean under torch.
// Screenshots: jupyterlab-*.png.
//
// Environment: GRADGUARD_E2E_JUPYTER, GRADGUARD_E2E_CACHE (default .e2e),
// GRADGUARD_E2E_TORCH_PYTHON (a python with torch, default python3), GRADGUARD_E2E_SCREENSHOTS
// (default .e2e/screenshots; docs/screenshots refreshes the ones docs/editors.md shows),
// GRADGUARD_E2E_KEEP=1 keeps the temporary folder.
'use strict';

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const net = require('net');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const VENV = path.resolve(process.env.GRADGUARD_E2E_JUPYTER
    || path.join(process.env.GRADGUARD_E2E_CACHE || path.join(ROOT, '.e2e'), 'jupyter-venv'));
const TORCH_PYTHON = (p => (p.includes('/') ? path.resolve(p) : p))(process.env.GRADGUARD_E2E_TORCH_PYTHON || 'python3');
const SHOTS = process.env.GRADGUARD_E2E_SCREENSHOTS || path.join(ROOT, '.e2e', 'screenshots');
const CHROMIUM = process.env.GRADGUARD_E2E_CHROMIUM || '/usr/bin/chromium';
const NOTEBOOK = 'seed_notebook.ipynb';
const T0 = Date.now();

function log(msg) {
    console.log(`[jupyterlab-e2e ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);
}

class Failure extends Error {}
function check(name, ok, detail = '') {
    log(`${ok ? 'PASS' : 'FAIL'} ${name}${detail ? ` — ${detail}` : ''}`);
    if (!ok) throw new Failure(`${name}${detail ? `: ${detail}` : ''}`);
}

async function waitFor(what, fn, timeoutMs = 30_000, intervalMs = 250) {
    const end = Date.now() + timeoutMs;
    let last;
    for (;;) {
        try {
            last = await fn();
            if (last) return last;
        } catch (err) {
            last = err;
        }
        if (Date.now() > end) throw new Failure(`timed out after ${timeoutMs / 1000}s waiting for ${what} (last: ${last})`);
        await new Promise((r) => setTimeout(r, intervalMs));
    }
}

function freePort() {
    return new Promise((resolve, reject) => {
        const srv = net.createServer();
        srv.listen(0, '127.0.0.1', () => {
            const { port } = srv.address();
            srv.close(() => resolve(port));
        });
        srv.on('error', reject);
    });
}

function httpOk(url) {
    return new Promise((resolve) => {
        http.get(url, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
        }).on('error', () => resolve(false));
    });
}

async function shot(page, name, dir = SHOTS) {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `jupyterlab-${name}.png`);
    await page.screenshot({ path: file });
    log(`screenshot ${path.relative(ROOT, file)}`);
}

// ---- the notebook, seen through the DOM ----------------------------------------------------

const CELL_EDITORS = '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell .cm-content';

/** The text of each cell's editor, in order. */
async function cellTexts(page) {
    return page.$$eval(CELL_EDITORS, (els) => els.map((el) =>
        [...el.querySelectorAll('.cm-line')].map((l) => l.textContent).join('\n')));
}

/** The squiggles of `severity` drawn by jupyterlab-lsp (CodeMirror's lint marks): cell index, text. */
async function squiggles(page, severity = 'error') {
    return page.$$eval(CELL_EDITORS, (els, severity) => els.flatMap((el, cell) =>
        [...el.querySelectorAll(`.cm-lintRange-${severity}`)].map((m) => ({ cell, text: m.textContent }))), severity);
}

/** The screen point of the middle of `needle` in cell `cell`'s editor. */
async function pointOf(page, cell, needle) {
    return page.$$eval(CELL_EDITORS, (els, [cell, needle]) => {
        const walker = document.createTreeWalker(els[cell], NodeFilter.SHOW_TEXT);
        let text = '';
        const nodes = [];
        while (walker.nextNode()) {
            nodes.push([walker.currentNode, text.length]);
            text += walker.currentNode.data;
        }
        const at = text.indexOf(needle) + Math.floor(needle.length / 2);
        if (at < needle.length / 2) return null;
        const [node, start] = nodes.filter(([, s]) => s <= at).pop();
        const range = document.createRange();
        range.setStart(node, at - start);
        range.setEnd(node, at - start + 1);
        const r = range.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
    }, [cell, needle]);
}

/** The hover (jupyterlab-lsp: Ctrl + mouse) on `needle` in cell `cell`, once `ready(text)` holds;
 * Ctrl is left down, so the tooltip stays for a screenshot. */
async function hoverText(page, cell, needle, ready) {
    const at = await pointOf(page, cell, needle);
    check(`\`${needle}\` is on screen`, at !== null);
    return waitFor(`the hover on ${needle}`, async () => {
        await page.keyboard.up('Control');
        await page.mouse.move(5, 5);
        await page.mouse.move(at.x, at.y);
        await page.keyboard.down('Control');
        await page.mouse.move(at.x + 1, at.y);
        const text = await page.locator('.lsp-hover').first().textContent({ timeout: 1_500 }).catch(() => '');
        return text && ready(text) ? text : null;
    }, 30_000, 300);
}

// ---- the scenario ---------------------------------------------------------------------------

/** jupyterlab-lsp's settings for GradGuard (`serverSettings`, sent as workspace/didChangeConfiguration). */
function serverSettings(settingsDir, gradguard) {
    const dir = path.join(settingsDir, '@jupyter-lsp', 'jupyterlab-lsp');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'plugin.jupyterlab-settings'),
        JSON.stringify({ language_servers: { gradguard: { serverSettings: { gradguard } } } }));
}

/** Opened with `ignore: ["GG101"]` in jupyterlab-lsp's settings: GradGuard reports nothing. */
async function ignored(page, published, settingsDir) {
    // the last diagnostics published (an analysis under the defaults may come first and be replaced)
    const last = () => published.length && published[published.length - 1].diagnostics.length;
    await waitFor('GradGuard\'s diagnostics', () => published.length > 0, 60_000);
    await page.waitForTimeout(1_500);
    check('with `ignore: ["GG101"]` in jupyterlab-lsp\'s serverSettings, no diagnostic and no squiggle',
        last() === 0 && (await squiggles(page)).length === 0, JSON.stringify(published.map((p) => p.diagnostics.length)));
    serverSettings(settingsDir, {});
    published.length = 0;
    await page.reload();
    await page.locator(CELL_EDITORS).nth(2).waitFor({ state: 'visible', timeout: 90_000 });
    log('settings back to the defaults, page reloaded');
}

async function scenario(page, dir, published) {
    // 1. the GG101 squiggle on the backward of the third cell
    const found = await waitFor('a GG101 squiggle', async () => {
        const s = await squiggles(page);
        return s.length ? s : null;
    }, 90_000, 500);
    check('one error squiggle, on `l.backward()` in the third cell',
        found.length === 1 && found[0].cell === 2 && found[0].text.includes('backward'), JSON.stringify(found));

    // 2. the hover: Ctrl + mouse over the call (jupyterlab-lsp's default); it shows the server's
    // hover and the diagnostic under the mouse
    const hover = await hoverText(page, 2, 'l.backward()', (t) => t.includes('walks it again'));
    check("the hover is GradGuard's: what the backward frees, which backward walks it again",
        hover.includes('Frees the saved tensors of') && hover.includes('Y = torch.mm(X, true_W) + true_b'), hover.slice(0, 300));
    const lint = await page.locator('.cm-tooltip-lint').first().textContent();
    check("the finding's message shows beside it", lint.includes('Trying to backward through the graph a second time')
        && lint.includes('gradguard'), lint.slice(0, 300));
    await page.keyboard.up('Control');
    await shot(page, '01-squiggle-hover');
    await page.keyboard.up('Control');
    await page.mouse.move(5, 5);

    // 3. the fixes, in the editor (the gradguard-jupyterlab extension): the cursor on the finding,
    // "GradGuard: Quick fix" from the cell's context menu or with Ctrl+., one fix picked from
    // GradGuard's list; the cell it edits changes, the squiggle goes
    const before = await cellTexts(page);
    const at = await pointOf(page, 2, 'l.backward()');
    await page.mouse.click(at.x, at.y);
    await page.mouse.click(at.x, at.y, { button: 'right' });
    const item = page.locator('.lm-Menu:visible .lm-Menu-itemLabel', { hasText: /^GradGuard: Quick fix$/ });
    await item.waitFor({ state: 'visible' });
    await shot(page, '02-context-menu');
    await item.click();
    const dialog = page.locator('.jp-Dialog');
    const offered = await waitFor('the list of fixes', async () => {
        const titles = await dialog.locator('select option').allTextContents();
        return titles.length ? titles : null;
    }, 20_000);
    check("the cell's context menu runs GradGuard: Quick fix, which lists the fixes of the finding at the cursor",
        offered.some((t) => t.includes('no_grad')) && offered.some((t) => t.includes('GG101')), JSON.stringify(offered));
    // the suppression: an edit of the third cell, whose lines are not the joined text's (the
    // extension maps them back); the squiggle goes, and Ctrl+Z in the cell brings it back
    const suppress = offered.find((t) => t.startsWith('Suppress GG101'));
    await dialog.locator('select').selectOption({ label: suppress });
    const suppressed = Date.now();
    await dialog.locator('.jp-mod-accept').click();
    const withComment = await waitFor('the suppression in the third cell', async () => {
        const t = await cellTexts(page);
        return t[2].includes('gradguard: ignore') ? t : null;
    }, 20_000);
    check(`"${suppress}" puts the comment on \`l.backward()\` in the third cell, nothing else changes`,
        withComment[2] === before[2].replace('l.backward()', 'l.backward()  # gradguard: ignore[GG101]')
        && withComment[0] === before[0] && withComment[1] === before[1], withComment[2]);
    await waitFor('no diagnostics for the suppressed text', () => published.some((p) => p.at > suppressed
        && p.diagnostics.length === 0), 30_000);
    await page.waitForTimeout(300);
    check('no squiggle once suppressed', (await squiggles(page)).length === 0, JSON.stringify(await squiggles(page)));
    await page.mouse.click(at.x, at.y);
    const undone = Date.now();
    await page.keyboard.press('Control+z');
    await waitFor('the suppression undone', async () => JSON.stringify(await cellTexts(page)) === JSON.stringify(before), 10_000);
    await waitFor('the GG101 squiggle back', async () => published.some((p) => p.at > undone && p.diagnostics.length === 1)
        && (await squiggles(page)).length === 1, 30_000);
    log('Ctrl+Z in the cell undid the suppression; the squiggle is back');
    for (const close of await page.locator('.Toastify__toast button').all()) await close.click();  // its notification
    await waitFor('the notification to go', async () => !(await page.locator('.Toastify__toast').count()), 5_000);
    // in the editor, the cursor on the finding, Ctrl+. (the mouse away: Ctrl over code is a hover)
    await page.mouse.click(at.x, at.y);
    await page.mouse.move(5, 5);
    await page.keyboard.press('Control+.');
    await dialog.locator('select').waitFor({ state: 'visible' });
    const noGrad = offered.find((t) => t.includes('no_grad'));
    await dialog.locator('select').selectOption({ label: noGrad });
    await shot(page, '03-quick-fix');
    const applied = Date.now();
    await dialog.locator('.jp-mod-accept').click();
    const after = await waitFor('the fixed cell in the editor', async () => {
        const t = await cellTexts(page);
        return t[0].includes('torch.no_grad()') ? t : null;
    }, 20_000);
    check(`Ctrl+. and "${noGrad}": the first cell now computes Y under torch.no_grad()`,
        !before[0].includes('no_grad') && /with torch\.no_grad\(\):\n\s+Y = torch\.mm/.test(after[0]), after[0]);
    check('the other cells are unchanged', after.length === 3 && after[1] === before[1] && after[2] === before[2],
        after.length === 3 ? '' : JSON.stringify(after));
    // the edit reaches the server as a didChange of the notebook's text; it publishes no diagnostics
    await waitFor('GradGuard to publish the fixed text\'s diagnostics', () => published.some((p) => p.at > applied
        && p.diagnostics.length === 0), 30_000);
    await page.waitForTimeout(500);
    check('no squiggle left after the fix', (await squiggles(page)).length === 0, JSON.stringify(await squiggles(page)));
    await shot(page, '04-fixed');
    await page.keyboard.press('Control+s');
    await waitFor('the notebook to be saved', async () =>
        !(await page.locator('.jp-mod-current.jp-mod-dirty').count()), 10_000);
    const onDisk = JSON.parse(fs.readFileSync(path.join(dir, NOTEBOOK), 'utf8')).cells.map((c) => c.source.join(''));
    check('the saved notebook holds the fixed cells', JSON.stringify(onDisk) === JSON.stringify(after),
        JSON.stringify(onDisk) === JSON.stringify(after) ? '' : JSON.stringify(onDisk));
    // the command palette has the command too; where nothing is found, it says so and edits nothing
    await page.keyboard.press('Control+Shift+c');
    await page.locator('.lm-CommandPalette-input').fill('GradGuard: Quick fix');
    await page.keyboard.press('Enter');
    const said = await waitFor('the notification', async () => {
        const toasts = await page.locator('.Toastify__toast').allTextContents();
        return toasts.find((t) => t.includes('no finding with a fix here'));
    }, 10_000);
    check('from the command palette, on the fixed line: no fix offered, the cells unchanged',
        JSON.stringify(await cellTexts(page)) === JSON.stringify(after), said);

    // 4. the fixed notebook, as saved: no finding, and its cells run clean under torch
    const again = spawnSync(path.join(VENV, 'bin', 'gradguard'), ['check', '--no-cache', NOTEBOOK], { cwd: dir, encoding: 'utf8' });
    check('gradguard check finds nothing in the fixed notebook', again.status === 0, again.stdout + again.stderr);
    const runCells = 'import json,sys\nnb=json.load(open(sys.argv[1]))\n' +
        'exec(compile("\\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"]=="code"), sys.argv[1], "exec"), {})';
    const ran = spawnSync(TORCH_PYTHON, ['-c', runCells, NOTEBOOK], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    check('the fixed notebook runs clean under torch', ran.status === 0, (ran.stderr || '').slice(-1500));
}

async function main() {
    const jupyter = path.join(VENV, 'bin', 'jupyter');
    if (!fs.existsSync(jupyter)) throw new Failure(`no JupyterLab in ${VENV}: run scripts/e2e_setup.sh`);
    const extension = path.join(VENV, 'share', 'jupyter', 'labextensions', 'gradguard-jupyterlab', 'package.json');
    if (!fs.existsSync(extension)) throw new Failure(`gradguard-jupyterlab is not installed in ${VENV}: run scripts/e2e_setup.sh`);
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gradguard-jupyterlab-'));
    const dir = path.join(tmp, 'work');
    const home = path.join(tmp, 'home');
    fs.mkdirSync(dir);
    fs.mkdirSync(home);
    fs.copyFileSync(path.join(ROOT, 'tests', 'e2e', 'workspace', NOTEBOOK), path.join(dir, NOTEBOOK));
    // JupyterLab's own state goes to the temporary folder; its news pop-up is turned off
    const settings = path.join(home, 'lab-settings');
    const notification = path.join(settings, '@jupyterlab', 'apputils-extension');
    fs.mkdirSync(notification, { recursive: true });
    fs.writeFileSync(path.join(notification, 'notification.jupyterlab-settings'),
        JSON.stringify({ fetchNews: 'false', checkForUpdates: false }));
    serverSettings(settings, { ignore: ['GG101'] });
    const env = {
        ...process.env, HOME: home, JUPYTER_CONFIG_DIR: path.join(home, 'config'),
        JUPYTER_RUNTIME_DIR: path.join(home, 'runtime'), JUPYTERLAB_SETTINGS_DIR: settings,
        JUPYTERLAB_WORKSPACES_DIR: path.join(home, 'workspaces'), IPYTHONDIR: path.join(home, 'ipython'),
    };
    const port = await freePort();
    const token = crypto.randomBytes(16).toString('hex');
    const server = spawn(jupyter, ['lab', '--no-browser', `--port=${port}`, '--ip=127.0.0.1',
        `--ServerApp.root_dir=${dir}`, `--IdentityProvider.token=${token}`, '--ServerApp.allow_root=True'],
    { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let serverLog = '';
    server.stdout.on('data', (d) => (serverLog += d));
    server.stderr.on('data', (d) => (serverLog += d));
    let browser;
    let page;
    let browserLog = '';
    try {
        await waitFor('JupyterLab to listen', () => httpOk(`http://127.0.0.1:${port}/api/status?token=${token}`), 90_000, 500);
        log(`JupyterLab on 127.0.0.1:${port}`);
        browser = await chromium.launch({
            executablePath: CHROMIUM,
            headless: true,
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
        });
        page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
        page.setDefaultTimeout(30_000);
        page.on('console', (m) => (browserLog += `${m.type()}: ${m.text()}\n`));
        // what the language server publishes, read off jupyter-lsp's websocket
        const published = [];
        page.on('websocket', (ws) => ws.url().includes('/lsp/ws/') && ws.on('framereceived', (frame) => {
            const msg = JSON.parse(frame.payload);
            if (msg.method === 'textDocument/publishDiagnostics') published.push({ at: Date.now(), ...msg.params });
        }));
        await page.goto(`http://127.0.0.1:${port}/lab/tree/${NOTEBOOK}?token=${token}`);
        await page.locator(CELL_EDITORS).nth(2).waitFor({ state: 'visible', timeout: 90_000 });
        log('notebook open');
        await ignored(page, published, settings);
        await scenario(page, dir, published);
        const status = await (await fetch(`http://127.0.0.1:${port}/lsp/status?token=${token}`)).json();
        const sessions = Object.keys(status.sessions);
        check('jupyter-lsp found only GradGuard, through its entry point, and started it',
            sessions.length === 1 && status.sessions.gradguard?.status === 'started'
            && status.sessions.gradguard.spec.display_name.startsWith('GradGuard'), JSON.stringify(status.sessions).slice(0, 600));
        log('all checks passed');
    } catch (err) {
        if (page) {
            await shot(page, 'failure', path.join(ROOT, '.e2e')).catch(() => undefined);
            const toasts = await page.locator('.Toastify__toast').allTextContents().catch(() => []);
            console.log(`---- notifications\n${toasts.join('\n')}\n---- browser console (last 4000 characters)\n${browserLog.slice(-4000)}`);
        }
        console.log(`---- JupyterLab log (last 6000 characters)\n${serverLog.slice(-6000)}`);
        throw err;
    } finally {
        if (browser) await browser.close().catch(() => undefined);
        try {
            process.kill(-server.pid, 'SIGTERM');
        } catch {
            /* already gone */
        }
        if (!process.env.GRADGUARD_E2E_KEEP) fs.rmSync(tmp, { recursive: true, force: true });
        else log(`kept ${tmp}`);
    }
}

main().then(() => process.exit(0), (err) => {
    console.error(err instanceof Failure ? `FAILED: ${err.message}` : err);
    process.exit(1);
});
