#!/usr/bin/env node
// End-to-end test of GradGuard in a real JupyterLab 4 with jupyterlab-lsp, driven through
// Debian's chromium with playwright-core.
//
//   node tests/e2e/jupyterlab/run.js
//
// The JupyterLab is the one in GRADGUARD_E2E_JUPYTER (a virtual environment where
// `pip install -e .[jupyter]` ran; scripts/e2e_setup.sh makes $GRADGUARD_E2E_CACHE/jupyter-venv),
// started on a temporary copy of tests/e2e/workspace/seed_notebook.ipynb with no configuration
// of its own: jupyter-lsp must find GradGuard through its entry point. It checks, as a user sees
// them: the GG101 squiggle on `l.backward()` in the third cell, the hover there (Ctrl + mouse,
// jupyterlab-lsp's default), and the fix applied to the cell. jupyterlab-lsp 5.3.0 has no code
// actions, so the fix is applied as a JupyterLab user can: the notebook saved,
// `gradguard check --fix --unsafe-fixes` typed in JupyterLab's terminal, File > Reload Notebook
// from Disk; the cell then holds the fix, the squiggle is gone, and the fixed notebook's cells
// run clean under torch. Screenshots: jupyterlab-*.png.
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

/** A menu item: `menu(page, 'File', 'New', 'Terminal')`. */
async function menu(page, top, ...items) {
    await page.locator('.lm-MenuBar-itemLabel', { hasText: new RegExp(`^${top}$`) }).click();
    for (const item of items) {
        await page.locator('.lm-Menu:visible .lm-Menu-itemLabel', { hasText: new RegExp(`^${item}$`) }).last().click();
    }
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

    // 3. the fix, applied to the cell: the CLI on the saved notebook, then reloaded from disk
    const before = await cellTexts(page);
    await page.keyboard.press('Control+s');
    await waitFor('the notebook to be saved', async () =>
        !(await page.locator('.jp-mod-current.jp-mod-dirty').count()), 10_000);
    await menu(page, 'File', 'New', 'Terminal');
    const terminal = page.locator('.jp-Terminal .xterm');
    await terminal.waitFor({ state: 'visible' });
    await terminal.click();
    await waitFor("the shell's prompt", async () => /[#$]$/.test((await terminal.textContent()).trim()), 30_000);
    await page.keyboard.type(`gradguard check --fix --unsafe-fixes ${NOTEBOOK}\n`);
    const onDisk = path.join(dir, NOTEBOOK);
    const firstCell = () => JSON.parse(fs.readFileSync(onDisk, 'utf8')).cells[0].source.join('');
    await waitFor('the fix written to the notebook', () => firstCell().includes('with torch.no_grad():'), 30_000);
    const said = await waitFor('the command to finish', async () => {
        const text = await terminal.textContent();
        return /no findings; 1 fixed/.test(text) ? text : null;
    }, 10_000);
    await shot(page, '02-fix-in-terminal');
    check('`gradguard check --fix --unsafe-fixes`, typed in JupyterLab\'s terminal, fixed the notebook on disk',
        !before[0].includes('no_grad'), said.match(/gradguard: [^#]*fixed/)[0]);
    await page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: NOTEBOOK }).click();
    const reloaded = Date.now();
    await menu(page, 'File', 'Reload Notebook from Disk');
    // (the cells' editors are rebuilt one after the other: wait for all three)
    const after = await waitFor('the fixed cell in the editor', async () => {
        const confirm = page.locator('.jp-Dialog .jp-mod-accept');  // if JupyterLab asks
        if (await confirm.count()) await confirm.first().click();
        const t = await cellTexts(page);
        return t.length === 3 && t[0].includes('torch.no_grad()') && t[2].includes('backward') ? t : null;
    }, 20_000);
    check('the first cell now computes Y under torch.no_grad()',
        !before[0].includes('no_grad') && /with torch\.no_grad\(\):\n\s+Y = torch\.mm/.test(after[0]), after[0]);
    check('the other cells are unchanged', after[1] === before[1] && after[2] === before[2], JSON.stringify([before, after]));
    // the reload sends the fixed text to the server, which answers with no diagnostics
    await waitFor('GradGuard to publish the fixed text\'s diagnostics', () => published.some((p) => p.at > reloaded
        && p.diagnostics.length === 0), 30_000);
    await page.waitForTimeout(500);
    check('no squiggle left after the fix', (await squiggles(page)).length === 0, JSON.stringify(await squiggles(page)));
    await shot(page, '03-fixed');

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
    // and the terminal keeps its text in the page (xterm's screen-reader rows) for the test to read
    serverSettings(settings, { ignore: ['GG101'] });
    const terminalSettings = path.join(settings, '@jupyterlab', 'terminal-extension');
    fs.mkdirSync(terminalSettings, { recursive: true });
    fs.writeFileSync(path.join(terminalSettings, 'plugin.jupyterlab-settings'), JSON.stringify({ screenReaderMode: true }));
    // the terminal's shell is not a login shell, which would reset PATH from /etc/profile
    fs.mkdirSync(path.join(home, 'config'));
    fs.writeFileSync(path.join(home, 'config', 'jupyter_server_config.json'),
        JSON.stringify({ ServerApp: { terminado_settings: { shell_command: ['/bin/bash'] } } }));
    const env = {
        ...process.env, HOME: home, JUPYTER_CONFIG_DIR: path.join(home, 'config'),
        JUPYTER_RUNTIME_DIR: path.join(home, 'runtime'), JUPYTERLAB_SETTINGS_DIR: settings,
        JUPYTERLAB_WORKSPACES_DIR: path.join(home, 'workspaces'), IPYTHONDIR: path.join(home, 'ipython'),
        // as from an activated environment: its `gradguard` for JupyterLab's terminal
        PATH: `${path.join(VENV, 'bin')}${path.delimiter}${process.env.PATH}`, SHELL: '/bin/bash',
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
        if (page) await shot(page, 'failure', path.join(ROOT, '.e2e')).catch(() => undefined);
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
