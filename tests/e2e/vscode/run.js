#!/usr/bin/env node
// End-to-end test of the GradGuard extension in a real VS Code (code-server 4.100, VS Code 1.100)
// driven through Debian's chromium with playwright-core.
//
//   node tests/e2e/vscode/run.js [path/to/gradguard-*.vsix]
//
// It builds nothing: it installs the given .vsix (default: the newest dist/*.vsix) into a fresh
// code-server (scripts/e2e_setup.sh puts one in .e2e/), opens a copy of tests/e2e/workspace with
// PATH's python3 being a bare venv (no gradguard, no pygls: the bundled server must carry them),
// and checks, as a user would see them: squiggles and Problems rows on the raising lines, the
// hover, quick fixes applied from Ctrl+. (the fixed files then run clean under torch), settings
// changed in .vscode/settings.json taking effect without a reload, and one clear message for a
// broken `gradguard.interpreter`; then the graph picture (opened with "GradGuard: Show Graph",
// a click on a node moves the cursor), a code lens and an inlay hint; then
// `gradguard.diagnosticScope: "workspace"` filling Problems for a file never opened. Screenshots:
// vscode-*.png (see SHOTS below).
//
// Environment: GRADGUARD_E2E_CACHE (default .e2e), GRADGUARD_E2E_TORCH_PYTHON (a python with
// torch, default python3), GRADGUARD_E2E_SCREENSHOTS (default .e2e/screenshots),
// GRADGUARD_E2E_KEEP=1 keeps the temporary folders.
'use strict';

const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const http = require('http');
const net = require('net');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CACHE = process.env.GRADGUARD_E2E_CACHE || path.join(ROOT, '.e2e');
const CODE_SERVER = path.join(CACHE, 'code-server', 'bin', 'code-server');
const TORCH_PYTHON = process.env.GRADGUARD_E2E_TORCH_PYTHON || 'python3';
// Screenshots go to .e2e/ unless asked for (GRADGUARD_E2E_SCREENSHOTS=docs/screenshots refreshes
// the ones README shows), so a test run leaves the tracked files alone.
const SHOTS = process.env.GRADGUARD_E2E_SCREENSHOTS || path.join(ROOT, '.e2e', 'screenshots');
const CHROMIUM = process.env.GRADGUARD_E2E_CHROMIUM || '/usr/bin/chromium';
const T0 = Date.now();

function log(msg) {
    console.log(`[vscode-e2e ${((Date.now() - T0) / 1000).toFixed(1)}s] ${msg}`);
}

class Failure extends Error {}
const results = [];
function check(name, ok, detail = '') {
    results.push({ name, ok });
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

function run(cmd, args, opts = {}) {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 300_000, ...opts });
    if (r.error) throw r.error;
    return r;
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
            resolve(res.statusCode < 500);
        }).on('error', () => resolve(false));
    });
}

function newestVsix() {
    const dist = path.join(ROOT, 'dist');
    const files = fs.existsSync(dist) ? fs.readdirSync(dist).filter((f) => f.endsWith('.vsix')) : [];
    files.sort((a, b) => fs.statSync(path.join(dist, b)).mtimeMs - fs.statSync(path.join(dist, a)).mtimeMs);
    return files.length ? path.join(dist, files[0]) : undefined;
}

// ---- the workbench, seen through the DOM ---------------------------------------------------

/**
 * The lines of the active editor that carry a squiggle of `kind`: 1-based line number, text, and
 * the index of the code editor (a notebook has one per cell; VS Code draws notebook editors in an
 * overlay outside the editor group, hence `scope`).
 */
async function squiggles(page, kind = 'error', scope = '.part.editor .editor-group-container.active .monaco-editor') {
    return page.evaluate(([kind, scope]) => {
        const out = [];
        document.querySelectorAll(scope).forEach((editor, index) => {
            const lines = [...editor.querySelectorAll('.view-lines > .view-line')];
            const tops = lines.map((el) => parseFloat(el.style.top)).sort((a, b) => a - b);
            for (const overlay of editor.querySelectorAll('.view-overlays > div')) {
                if (!overlay.querySelector(`.squiggly-${kind}`)) continue;
                const top = parseFloat(overlay.style.top);
                const line = lines.find((el) => parseFloat(el.style.top) === top);
                out.push({
                    editor: index,
                    // the first rendered line is line 1 in these small files (nothing scrolled off)
                    line: tops.indexOf(top) + 1,
                    text: (line?.textContent || '').replace(/\u00a0/g, ' '),
                });
            }
        });
        return out;
    }, [kind, scope]);
}

async function editorText(page) {
    return page.evaluate(() => {
        const editor = document.querySelector('.part.editor .editor-group-container.active .monaco-editor');
        const rows = [...editor.querySelectorAll('.view-lines > .view-line')];
        rows.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
        return rows.map((r) => r.textContent.replace(/\u00a0/g, ' ')).join('\n');
    });
}

async function cursorPosition(page) {
    return (await page.locator('[id="status.editor.selection"]').first().textContent()) || '';
}

async function shot(page, name, dir = SHOTS) {
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `vscode-${name}.png`);
    await page.screenshot({ path: file });
    log(`screenshot ${path.relative(ROOT, file)}`);
    return file;
}

async function command(page, name) {
    await page.keyboard.press('Control+Shift+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${name}`);
    await page.locator('.quick-input-list .monaco-list-row').first().waitFor({ state: 'visible' });
    await page.keyboard.press('Enter');
}

async function openFile(page, name) {
    const input = page.locator('.quick-input-widget input');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    await waitFor(`${name} in Quick Open`, async () => {
        await page.keyboard.press('Control+P');
        await input.waitFor({ state: 'visible' });
        await input.fill(name);
        try {
            await row.waitFor({ state: 'visible', timeout: 5_000 });
            return true;
        } catch {
            await page.keyboard.press('Escape');
            return false;
        }
    }, 30_000, 0);
    await page.keyboard.press('Enter');
    await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ state: 'visible' });
    if (!name.endsWith('.ipynb')) await page.locator('.part.editor .editor-group-container.active .monaco-editor textarea').focus();
}

async function gotoPosition(page, line, col) {
    await page.keyboard.press('Control+G');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`:${line}:${col}`);
    await page.keyboard.press('Enter');
    await waitFor(`cursor at ${line}:${col}`, async () => (await cursorPosition(page)).includes(`Ln ${line}, Col ${col}`), 5_000);
}

async function problemsRows(page) {
    return page.locator('.markers-panel .monaco-list-row').allTextContents();
}

/** Applies the quick fix whose title matches `titleRe` at line:col, via Ctrl+. */
async function quickFix(page, line, col, titleRe) {
    await gotoPosition(page, line, col);
    await page.keyboard.press('Control+.');
    const rows = page.locator('.action-widget .monaco-list-row');
    await rows.first().waitFor({ state: 'visible', timeout: 15_000 });
    const titles = await rows.allTextContents();
    const index = titles.findIndex((t) => titleRe.test(t));
    // The menu is driven with the keyboard (a pointer block sits over it): move to the row, Enter.
    const apply = async () => {
        for (let i = 0; i < titles.length * 2; i++) {
            const focused = (await page.locator('.action-widget .monaco-list-row.focused').getAttribute('aria-label')) || '';
            if (titleRe.test(focused)) {
                await page.keyboard.press('Enter');
                return;
            }
            await page.keyboard.press('ArrowDown');
        }
        throw new Failure(`could not select a quick fix matching ${titleRe}`);
    };
    return { titles, index, apply };
}

function writeWorkspaceSettings(workspace, settings) {
    const dir = path.join(workspace, '.vscode');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

function runWithTorch(file) {
    const r = run(TORCH_PYTHON, [file], { cwd: path.dirname(file), timeout: 120_000 });
    return { ok: r.status === 0 && !/Trying to backward/.test(r.stderr), out: `${r.stdout}${r.stderr}`.trim().split('\n').slice(-3).join(' | ') };
}

// ---- the test -------------------------------------------------------------------------------

async function main() {
    const vsix = path.resolve(process.argv[2] || newestVsix() || '');
    if (!fs.existsSync(vsix) || !vsix.endsWith('.vsix')) throw new Failure(`no .vsix (build one with \`npm run package\`): ${vsix}`);
    if (!fs.existsSync(CODE_SERVER)) throw new Failure(`no code-server at ${CODE_SERVER}: run scripts/e2e_setup.sh`);
    const torch = run(TORCH_PYTHON, ['-c', 'import torch']);
    if (torch.status !== 0) throw new Failure(`${TORCH_PYTHON} cannot import torch (set GRADGUARD_E2E_TORCH_PYTHON)`);
    log(`vsix ${path.relative(ROOT, vsix)}`);

    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gradguard-vscode-e2e-'));
    const dirs = Object.fromEntries(['user', 'extensions', 'config', 'data', 'cache', 'chrome'].map((d) => [d, path.join(tmp, d)]));
    Object.values(dirs).forEach((d) => fs.mkdirSync(d, { recursive: true }));
    const workspace = path.join(tmp, 'workspace');
    fs.cpSync(path.join(__dirname, '..', 'workspace'), workspace, { recursive: true });
    // For "GradGuard: Fix All" (created now: Quick Open may not list files created later at once).
    fs.copyFileSync(path.join(workspace, 'two_losses.py'), path.join(workspace, 'fix_all_demo.py'));
    // For the graph picture, lenses and hints: seed 000 again, left unfixed.
    fs.copyFileSync(path.join(workspace, 'target_in_loop.py'), path.join(workspace, 'graph_demo.py'));
    fs.copyFileSync(path.join(workspace, 'two_losses.py'), path.join(workspace, 'graph_follow.py'));

    // The server's Python: a bare venv (gradguard.interpreter), which has neither gradguard nor
    // pygls: the server must come from the .vsix.
    const venv = path.join(tmp, 'venv-bare');
    run('python3', ['-m', 'venv', '--without-pip', venv]);
    const venvPython = path.join(venv, 'bin', 'python3');
    const bare = run(venvPython, ['-c', 'import pygls']);
    check('the server interpreter has no pygls (bundling is what is tested)', bare.status !== 0);
    const env = {
        PATH: `${path.join(venv, 'bin')}:/usr/local/bin:/usr/bin:/bin`,
        HOME: tmp,
        XDG_CONFIG_HOME: dirs.config,
        XDG_DATA_HOME: dirs.data,
        XDG_CACHE_HOME: dirs.cache,
        TMPDIR: tmp,
        LANG: 'C.UTF-8',
    };
    fs.mkdirSync(path.join(dirs.user, 'User'), { recursive: true });
    fs.writeFileSync(
        path.join(dirs.user, 'User', 'settings.json'),
        JSON.stringify({
            'workbench.startupEditor': 'none',
            'workbench.tips.enabled': false,
            'workbench.enableExperiments': false,
            'security.workspace.trust.enabled': false,
            'extensions.autoCheckUpdates': false,
            'extensions.autoUpdate': false,
            'extensions.ignoreRecommendations': true,
            'telemetry.telemetryLevel': 'off',
            'update.mode': 'none',
            'editor.minimap.enabled': false,
            'editor.hover.delay': 200,
            'files.autoSave': 'off',
            'window.restoreWindows': 'none',
            'chat.disableAIFeatures': true,
            'gradguard.interpreter': [venvPython],
            ...(process.env.GRADGUARD_E2E_TRACE ? { 'gradguard.trace.server': 'verbose' } : {}),
        }),
    );

    const csArgs = ['--user-data-dir', dirs.user, '--extensions-dir', dirs.extensions];
    const install = run(CODE_SERVER, [...csArgs, '--install-extension', vsix], { env: { ...process.env, ...env } });
    check('code-server --install-extension', install.status === 0 && /successfully installed/i.test(install.stdout + install.stderr), (install.stdout + install.stderr).trim().split('\n').pop());

    const port = await freePort();
    const server = spawn(
        CODE_SERVER,
        [...csArgs, '--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check',
            '--disable-workspace-trust', '--disable-getting-started-override', workspace],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let serverLog = '';
    server.stdout.on('data', (d) => (serverLog += d));
    server.stderr.on('data', (d) => (serverLog += d));
    let browser;
    let page;
    try {
        await waitFor('code-server to listen', () => httpOk(`http://127.0.0.1:${port}/healthz`), 60_000, 500);
        log(`code-server on 127.0.0.1:${port}`);
        browser = await chromium.launchPersistentContext(dirs.chrome, {
            executablePath: CHROMIUM,
            headless: true,
            viewport: { width: 1440, height: 900 },
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
                '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
        });
        page = browser.pages()[0] || (await browser.newPage());
        page.setDefaultTimeout(30_000);
        await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
        await page.locator('.monaco-workbench .part.editor').waitFor({ state: 'visible', timeout: 90_000 });
        await page.waitForTimeout(2_000);
        log('workbench up');
        await scenario(page, workspace);
    } catch (err) {
        if (page) await shot(page, 'failure', CACHE).catch(() => undefined);
        dumpLogs(dirs.user, serverLog);
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

async function scenario(page, workspace) {
    // 1. Seed 000: the target built from requires_grad tensors outside the loop.
    const loopFile = path.join(workspace, 'target_in_loop.py');
    const loopSource = fs.readFileSync(loopFile, 'utf8').split('\n');
    const raiseLine = loopSource.findIndex((l) => l.trim() === 'l.backward()') + 1;
    await openFile(page, 'target_in_loop.py');
    const sq = await waitFor('a squiggle in target_in_loop.py', async () => (await squiggles(page)).length && squiggles(page), 60_000);
    check('squiggle on the raising line only', sq.length === 1 && sq[0].line === raiseLine && sq[0].text.includes('l.backward()'), JSON.stringify(sq));
    await shot(page, '01-squiggle');

    await page.keyboard.press('Control+Shift+M');
    const rows = await waitFor('a Problems row', async () => {
        const r = await problemsRows(page);
        return r.some((t) => t.includes('GG101')) && r;
    });
    const row = rows.find((t) => t.includes('GG101'));
    check('Problems entry: GG101 on the raising line', /Trying to backward through the graph a second time/.test(row) && row.includes(`[Ln ${raiseLine}, Col`), row);
    await shot(page, '02-problems');
    await page.keyboard.press('Control+Shift+M'); // hide the panel again
    await page.locator('.part.editor .editor-group-container.active .monaco-editor textarea').focus();

    // Hover on the backward call: the server's hover says which graph it frees.
    const col = loopSource[raiseLine - 1].indexOf('backward') + 2;
    await gotoPosition(page, raiseLine, col);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    const hover = await waitFor('the hover', async () => {
        const text = (await page.locator('.monaco-hover').allTextContents()).join('\n');
        return /GG101/.test(text) && /Frees the saved tensors/.test(text) && text;
    }, 15_000);
    // The diagnostic's text, then the server's hover: which graph this backward frees.
    const served = hover.slice(hover.indexOf('Frees the saved tensors')).replace(/\s+/g, ' ');
    check('hover on l.backward() explains the graph it frees', /Y = torch\.mm\(X, true_W\) \+ true_b/.test(served), served.slice(0, 160));
    await shot(page, '03-hover');
    await page.keyboard.press('Escape');

    // Quick fix: compute the target under torch.no_grad() (or detach it).
    const fix = await quickFix(page, raiseLine, col, /no_grad|detach/);
    check('Ctrl+. offers a no_grad/detach quick fix', fix.index >= 0, JSON.stringify(fix.titles));
    await shot(page, '04-quickfix-menu');
    const before = fs.readFileSync(loopFile, 'utf8');
    await fix.apply();
    await waitFor('the squiggle to go after the fix', async () => (await squiggles(page)).length === 0, 30_000);
    const shown = await editorText(page);
    check('the buffer changed as the fix says', /with torch\.no_grad\(\):\n\s+Y = torch\.mm\(X, true_W\) \+ true_b|\.detach\(\)/.test(shown), shown.split('\n').slice(5, 11).join(' / '));
    await page.keyboard.press('Control+S');
    await waitFor('the fixed file on disk', () => fs.readFileSync(loopFile, 'utf8') !== before, 10_000);
    await shot(page, '05-fixed');
    const ran = runWithTorch(loopFile);
    check('the fixed target_in_loop.py runs clean under torch', ran.ok, ran.out);

    // 2. Seed 001: two backward calls through one graph.
    const lossFile = path.join(workspace, 'two_losses.py');
    const lossSource = fs.readFileSync(lossFile, 'utf8').split('\n');
    const secondLine = lossSource.findIndex((l) => l.startsWith('loss2.backward()')) + 1;
    const firstLine = lossSource.findIndex((l) => l.startsWith('loss1.backward()')) + 1;
    await openFile(page, 'two_losses.py');
    const sq2 = await waitFor('a squiggle in two_losses.py', async () => (await squiggles(page)).length && squiggles(page), 30_000);
    check('squiggle on the second backward', sq2.length === 1 && sq2[0].line === secondLine, JSON.stringify(sq2));

    // 3. Settings take effect without a reload (written to .vscode/settings.json, as a user would).
    writeWorkspaceSettings(workspace, { 'gradguard.ignore': ['GG101'] });
    await waitFor('gradguard.ignore ["GG101"] to clear the squiggle', async () => (await squiggles(page)).length === 0, 20_000);
    check('gradguard.ignore: ["GG101"] applies live', true);
    await shot(page, '06-ignore-setting');
    writeWorkspaceSettings(workspace, {});
    await waitFor('the squiggle to come back', async () => (await squiggles(page)).length === 1, 20_000);
    writeWorkspaceSettings(workspace, { 'gradguard.enable': false });
    await waitFor('gradguard.enable false to clear the squiggle', async () => (await squiggles(page)).length === 0, 20_000);
    check('gradguard.enable: false applies live', true);
    writeWorkspaceSettings(workspace, {});
    await waitFor('the squiggle to come back', async () => (await squiggles(page)).length === 1, 20_000);
    check('clearing the settings brings the finding back', true);

    // 4. A too-old Python, then a broken interpreter path: one clear message each, no stack trace.
    const toasts = page.locator('.notifications-toasts .notification-toast', { hasText: 'GradGuard' });
    const oldPython = path.join(workspace, '..', 'python3.8');
    // Answers the extension's start-up probe as a Python 3.8 does.
    fs.writeFileSync(oldPython, '#!/bin/sh\necho \'{"version": [3, 8, 18], "executable": "/usr/bin/python3.8", "errors": {}}\'\n', { mode: 0o755 });
    writeWorkspaceSettings(workspace, { 'gradguard.interpreter': [oldPython] });
    const oldMessage = await waitFor('the too-old-Python message', async () => (await toasts.count()) > 0 && toasts.first().locator('.notification-list-item-message').textContent(), 30_000);
    await page.waitForTimeout(3_000);
    const oldCount = await toasts.count();
    check('Python 3.8 gives one clear message', oldCount === 1 && /needs Python 3\.10 or newer/.test(oldMessage) && oldMessage.includes('3.8.18'), `${oldCount} message(s): ${oldMessage}`);
    await command(page, 'Notifications: Clear All Notifications');
    await waitFor('the notifications to clear', async () => (await toasts.count()) === 0, 10_000);
    writeWorkspaceSettings(workspace, { 'gradguard.interpreter': ['/nonexistent/bin/python3'] });
    const message = await waitFor('the broken-interpreter message', async () => (await toasts.count()) > 0 && toasts.first().locator('.notification-list-item-message').textContent(), 30_000);
    await page.waitForTimeout(4_000);
    const count = await toasts.count();
    check('a broken gradguard.interpreter gives one clear message', count === 1 && /could not find Python/.test(message) && message.includes('/nonexistent/bin/python3') && !/Traceback|at .*\.js:\d+/.test(message), `${count} message(s): ${message}`);
    await shot(page, '07-broken-interpreter');
    writeWorkspaceSettings(workspace, {});
    await waitFor('the server to restart with a good interpreter', async () => (await squiggles(page)).length === 1, 40_000);
    check('fixing the setting restarts the server', true);
    await page.keyboard.press('Escape');

    // 5. Quick fix for the two losses: retain_graph=True on the first backward.
    const col2 = lossSource[secondLine - 1].indexOf('backward') + 2;
    const fix2 = await quickFix(page, secondLine, col2, /retain_graph/);
    check('Ctrl+. offers retain_graph=True', fix2.index >= 0, JSON.stringify(fix2.titles));
    const before2 = fs.readFileSync(lossFile, 'utf8');
    await fix2.apply();
    await waitFor('the squiggle to go after the fix', async () => (await squiggles(page)).length === 0, 30_000);
    const shown2 = await editorText(page);
    check('loss1.backward(retain_graph=True) in the buffer', shown2.split('\n')[firstLine - 1]?.includes('loss1.backward(retain_graph=True)'), shown2.split('\n')[firstLine - 1]);
    await page.keyboard.press('Control+S');
    await waitFor('the fixed file on disk', () => fs.readFileSync(lossFile, 'utf8') !== before2, 10_000);
    const ran2 = runWithTorch(lossFile);
    check('the fixed two_losses.py runs clean under torch', ran2.ok, ran2.out);
    await shot(page, '08-retain-graph-fixed');

    // 6. "GradGuard: Fix All" on a fresh copy of the two losses; "GradGuard: Show Logs".
    const fixAllFile = path.join(workspace, 'fix_all_demo.py');
    await openFile(page, 'fix_all_demo.py');
    await waitFor('a squiggle in fix_all_demo.py', async () => (await squiggles(page)).length === 1, 30_000);
    await command(page, 'GradGuard: Fix All');
    await waitFor('Fix All to clear the squiggle', async () => (await squiggles(page)).length === 0, 30_000);
    await page.keyboard.press('Control+S');
    await waitFor('the fixed file on disk', () => fs.readFileSync(fixAllFile, 'utf8') !== lossSource.join('\n'), 10_000);
    const ran3 = runWithTorch(fixAllFile);
    check('"GradGuard: Fix All" fixes the file, which then runs clean under torch', ran3.ok, `${fs.readFileSync(fixAllFile, 'utf8').split('\n').slice(6, 10).join(' / ')} → ${ran3.out}`);
    await command(page, 'GradGuard: Show Logs');
    const logText = await waitFor('the GradGuard log in the Output panel', async () => {
        const texts = await page.locator('.view-lines').allTextContents();
        return texts.map((t) => t.replace(/\u00a0/g, " ")).find((t) => /Server running/.test(t));
    }, 15_000);
    check('"GradGuard: Show Logs" shows the GradGuard log', /gradguard lsp/.test(logText), logText.replace(/\s+/g, ' ').slice(0, 120));
    await shot(page, '09-logs');
    await page.keyboard.press('Control+J'); // hide the panel

    // 7. A Jupyter notebook (VS Code's built-in .ipynb support): the squiggle in the third cell.
    await openFile(page, 'seed_notebook.ipynb');
    const cellEditors = '.notebook-editor .monaco-editor';
    const sq3 = await waitFor('a squiggle in the notebook', async () => (await squiggles(page, 'error', cellEditors)).length && squiggles(page, 'error', cellEditors), 60_000);
    check('notebook: squiggle on l.backward(), line 5 of the third cell', sq3.length === 1 && sq3[0].editor === 2 && sq3[0].line === 5 && sq3[0].text.includes('l.backward()'), JSON.stringify(sq3));
    await shot(page, '10-notebook');

    await graphScenario(page, workspace);
    await workspaceScenario(page, workspace);
}

/** The graph webview's document (code-server nests each webview's page in two iframes, and
 * the notebook's renderer has one too): the frame that holds the picture. */
async function graphFrame(page) {
    for (const frame of page.frames()) {
        if (await frame.locator('svg.gg').count().catch(() => 0)) return frame;
    }
    return undefined;
}

async function graphScenario(page, workspace) {
    // 8. Seed 000 once more: a code lens on the backward, an inlay hint, the graph picture.
    const file = path.join(workspace, 'graph_demo.py');
    const source = fs.readFileSync(file, 'utf8').split('\n');
    const raiseLine = source.findIndex((l) => l.trim() === 'l.backward()') + 1;
    const targetLine = source.findIndex((l) => l.startsWith('Y = ')) + 1;
    const originLine = source.findIndex((l) => l.startsWith('true_W = ')) + 1;
    await openFile(page, 'graph_demo.py');
    await waitFor('a squiggle in graph_demo.py', async () => (await squiggles(page)).length === 1, 60_000);
    const lensSelector = '.part.editor .editor-group-container.active .monaco-editor .codelens-decoration';
    const lens = await waitFor('a code lens on l.backward()', async () => {
        const texts = await page.locator(lensSelector).allTextContents();
        return texts.find((t) => /walks the graph freed on line/.test(t));
    }, 30_000);
    check('code lens on the backward: it walks the graph it freed, and frees saved steps',
        lens.includes(`walks the graph freed on line ${raiseLine}`) && /frees \d+ saved steps? of l ← Y/.test(lens) && /GG101: show graph/.test(lens), lens);
    await shot(page, '11-codelens');

    await command(page, 'GradGuard: Toggle Inlay Hints');
    const hinted = await waitFor('an inlay hint after the target', async () => {
        const text = await editorText(page);
        return text.split('\n')[targetLine - 1]?.includes('‹grad ← true_W, true_b›') && text;
    }, 30_000);
    check('inlay hints: what the target carries graph from, what the backward frees',
        /‹frees \d+ saved›/.test(hinted.split('\n')[raiseLine - 1]), hinted.split('\n')[targetLine - 1]);
    await shot(page, '12-inlay-hints');
    await command(page, 'GradGuard: Toggle Inlay Hints');
    await waitFor('the hints to go', async () => !(await editorText(page)).includes('‹grad'), 20_000);
    await page.locator('.part.editor .editor-group-container.active .monaco-editor textarea').focus();

    const col = source[raiseLine - 1].indexOf('backward') + 2;
    await gotoPosition(page, raiseLine, col);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    const link = await waitFor('the link to the graph in the hover', async () => {
        const anchors = page.locator('.monaco-hover a', { hasText: 'Show the graph of this finding' });
        return (await anchors.count()) > 0 && ((await anchors.first().getAttribute('data-href')) || 'no data-href');
    }, 15_000);
    check('the finding\'s hover links to its graph', link.startsWith('command:gradguard.showGraph?'), link.slice(0, 80));
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+B'); // the side bar off: room for the picture beside the code
    await command(page, 'GradGuard: Show Graph');
    const view = await waitFor('the graph webview', () => graphFrame(page), 30_000);
    const picture = (await view.locator('svg.gg').textContent()) || '';
    check('Show Graph: the picture of the finding beside the editor, iteration k and k + 1',
        picture.includes('GG101') && picture.includes('iteration k + 1') && picture.includes('Y = torch.mm(X, true_W) + true_b')
            && (await page.locator('.editor-group-container').count()) >= 2, picture.slice(0, 160));
    await shot(page, '13-graph');

    await view.locator(`a.value.origin[data-line="${originLine}"]`).click();
    await waitFor(`the cursor on line ${originLine} after a click on its node`,
        async () => (await cursorPosition(page)).includes(`Ln ${originLine},`), 15_000);
    check('a click on a node of the picture moves the cursor to its line', true, await cursorPosition(page));
    await shot(page, '14-graph-click');

    // The picture takes the theme's colours: its background is the editor's, light then dark.
    const background = async () => {
        const frame = await graphFrame(page);
        return frame && frame.locator('svg.gg rect.bg').evaluate((el) => getComputedStyle(el).fill);
    };
    const light = await background();
    writeWorkspaceSettings(workspace, { 'workbench.colorTheme': 'Default Dark Modern' });
    const dark = await waitFor('the picture in the dark theme', async () => {
        const fill = await background();
        return fill && fill !== light && fill;
    }, 20_000);
    const luma = (rgb) => (rgb.match(/\d+/g) || []).slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
    check('the picture follows the colour theme', luma(light) > 600 && luma(dark) < 150, `${light} -> ${dark}`);
    await shot(page, '15-graph-dark');
    writeWorkspaceSettings(workspace, {});

    // The picture follows the finding under the cursor, in another file too.
    const follow = fs.readFileSync(path.join(workspace, 'graph_follow.py'), 'utf8').split('\n');
    const followLine = follow.findIndex((l) => l.startsWith('loss2.backward()')) + 1;
    await openFile(page, 'graph_follow.py');
    await waitFor('a squiggle in graph_follow.py', async () => (await squiggles(page)).length === 1, 30_000);
    await gotoPosition(page, followLine, 3);
    const followed = await waitFor('the picture of the finding under the cursor', async () => {
        const frame = await graphFrame(page);
        const text = frame && (await frame.locator('svg.gg').textContent());
        return text && text.includes(`graph_follow.py, line ${followLine}`) && text;
    }, 20_000);
    check('the picture follows the finding under the cursor', followed.includes('loss1.backward()'), `line ${followLine}`);
}

/** The Problems panel's rows under the file row of `name` (file rows name the file; marker rows follow it). */
async function problemsOf(page, name) {
    const rows = await problemsRows(page);
    const start = rows.findIndex((t) => t.startsWith(name));
    if (start < 0) return [];
    const end = rows.findIndex((t, i) => i > start && /\.(py|ipynb)/.test(t) && !/\[Ln \d+/.test(t));
    return rows.slice(start + 1, end < 0 ? rows.length : end);
}

async function workspaceScenario(page, workspace) {
    // 9. gradguard.diagnosticScope "workspace": a file never opened gets its problem in the
    // Problems panel; fixed on disk, it goes (the client's file watcher tells the server); the
    // bug back, it is back; "openFiles" again takes it away.
    const file = path.join(workspace, 'never_opened.py');
    const buggy = fs.readFileSync(file, 'utf8');
    const line = buggy.split('\n').findIndex((l) => l.includes('scores.numpy()')) + 1;
    const bad = runWithTorch(file);
    check('never_opened.py raises under torch (the ground truth of its finding)', !bad.ok && /Can't call numpy\(\) on Tensor that requires grad/.test(bad.out), bad.out);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+B'); // the side bar back: the Explorer shows the file, not opened
    await page.keyboard.press('Control+Shift+M');
    await page.locator('.markers-panel').waitFor({ state: 'visible' });
    await command(page, 'View: Toggle Maximized Panel'); // every file's rows in view (the list is virtual)
    const before = await problemsOf(page, 'never_opened.py');
    check('openFiles (the default): nothing for a file never opened', before.length === 0, JSON.stringify(before));
    writeWorkspaceSettings(workspace, { 'gradguard.diagnosticScope': 'workspace' });
    const rows = await waitFor('a Problems row for never_opened.py', async () => {
        const r = await problemsOf(page, 'never_opened.py');
        return r.some((t) => t.includes('GG107')) && r;
    }, 90_000);
    const row = rows.find((t) => t.includes('GG107'));
    check('workspace scope: GG107 of the never-opened file in Problems, on its raising line',
        /Can't call numpy\(\) on Tensor that requires grad/.test(row) && row.includes(`[Ln ${line}, Col`), row);
    const opened = await page.locator('.tabs-container .tab', { hasText: 'never_opened.py' }).count();
    check('never_opened.py was never opened in an editor', opened === 0, `${opened} tab(s)`);
    await shot(page, '16-workspace-problems');

    fs.writeFileSync(file, buggy.replace('scores.numpy()', 'scores.detach().numpy()'));
    const fixed = runWithTorch(file);
    check('fixed on disk, never_opened.py runs clean under torch', fixed.ok, fixed.out);
    await waitFor('the row to go once the file is fixed on disk', async () => (await problemsOf(page, 'never_opened.py')).length === 0, 60_000);
    check('a file changed on disk is analysed again (workspace/didChangeWatchedFiles)', true);
    fs.writeFileSync(file, buggy);
    await waitFor('the row to come back with the bug', async () => (await problemsOf(page, 'never_opened.py')).some((t) => t.includes('GG107')), 60_000);
    check('the bug written back is found again', true);
    writeWorkspaceSettings(workspace, {});
    await waitFor('"openFiles" to take the row away', async () => (await problemsOf(page, 'never_opened.py')).length === 0, 30_000);
    check('diagnosticScope back to "openFiles" clears what the workspace scan published', true);
    await command(page, 'View: Toggle Maximized Panel');
}

function dumpLogs(userDir, serverLog) {
    console.log('---- code-server output (tail) ----');
    console.log(serverLog.split('\n').slice(-30).join('\n'));
    const walk = (dir) => (fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)])) : []);
    for (const file of walk(path.join(userDir, 'logs')).filter((f) => /GradGuard|gradguard/.test(path.basename(f)))) {
        console.log(`---- ${file} (tail) ----`);
        console.log(fs.readFileSync(file, 'utf8').split('\n').slice(-60).join('\n'));
    }
}

main().then(
    () => {
        const failed = results.filter((r) => !r.ok).length;
        console.log(`${results.length - failed} passed, ${failed} failed`);
        process.exit(failed ? 1 : 0);
    },
    (err) => {
        console.error(`[vscode-e2e] ${err instanceof Failure ? 'FAILED' : 'ERROR'}: ${err.stack || err}`);
        const failed = Math.max(1, results.filter((r) => !r.ok).length);
        console.log(`${results.filter((r) => r.ok).length} passed, ${failed} failed`);
        process.exit(1);
    },
);
