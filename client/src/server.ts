import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    ClientCapabilities,
    CloseAction,
    DidChangeConfigurationNotification,
    DocumentSelector,
    ErrorAction,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
    State,
    StaticFeature,
    TransportKind,
} from 'vscode-languageclient/node';
import { bundledPaths, CONFIG_SECTION, SERVER_ID, SERVER_NAME, SHOW_GRAPH_COMMAND } from './constants';
import { logError, logInfo, logWarn } from './log';
import { chooseInterpreter, Interpreter, InterpreterProblem, probe, ProbeResult } from './python';
import { launchScope, LaunchSettings, readLaunchSettings, settingsPayload } from './settings';

/** Python files on disk and unsaved, and Python cells of Jupyter notebooks and the interactive window. */
export const DOCUMENT_SELECTOR: DocumentSelector = [
    { scheme: 'file', language: 'python' },
    { scheme: 'untitled', language: 'python' },
    { notebook: 'jupyter-notebook', language: 'python' },
    { notebook: 'interactive', language: 'python' },
];

/** How many crashes in a row we restart after, before telling the user. */
const MAX_RESTARTS = 3;

interface Launch {
    interpreter: Interpreter;
    options: ServerOptions;
}

/**
 * Owns the language client: start, restart on interpreter/setting changes, stop.
 * Problems that keep the server from starting are shown once (until something changes).
 */
export class ServerManager implements vscode.Disposable {
    private client: LanguageClient | undefined;
    private starting: Promise<void> = Promise.resolve();
    private lastProblem: string | undefined;

    constructor(
        private readonly context: vscode.ExtensionContext,
        private readonly channel: vscode.LogOutputChannel,
    ) {}

    get languageClient(): LanguageClient | undefined {
        return this.client;
    }

    /** (Re)starts the server; concurrent calls are serialised. */
    restart(reason: string): Promise<void> {
        this.starting = this.starting.then(() => this.doRestart(reason)).catch((err) => logError(`restart failed: ${err}`));
        return this.starting;
    }

    /** Pushes the live settings to the running server (no restart). */
    async sendSettings(): Promise<void> {
        if (this.client?.state === State.Running) {
            logInfo('Settings changed: sending workspace/didChangeConfiguration');
            await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: settingsPayload(launchScope()) });
        }
    }

    async stop(): Promise<void> {
        const client = this.client;
        this.client = undefined;
        if (client) {
            try {
                await client.stop(5_000);
            } catch (err) {
                logWarn(`Stopping the server: ${err}`);
            }
            await client.dispose();
        }
    }

    dispose(): void {
        void this.stop();
    }

    private async doRestart(reason: string): Promise<void> {
        logInfo(`Starting the server (${reason})`);
        await this.stop();
        let launch: Launch;
        try {
            launch = await this.prepare(readLaunchSettings());
        } catch (err) {
            this.report(err);
            return;
        }
        const client = new LanguageClient(SERVER_ID, SERVER_NAME, launch.options, this.clientOptions());
        client.registerFeature(new PushDiagnosticsOnly());
        client.registerFeature(new ShowsGraphs());
        this.client = client;
        try {
            await client.start();
            this.lastProblem = undefined;
            logInfo(`Server running: ${describeCommand(launch.options)}`);
        } catch (err) {
            this.client = undefined;
            await client.dispose().catch(() => undefined);
            this.report(
                new InterpreterProblem(
                    `The GradGuard server did not start with ${launch.interpreter.command.join(' ')}.`,
                    'See "GradGuard: Show Logs" for its output.',
                ),
                String(err),
            );
        }
    }

    /** Picks and checks the interpreter, and builds the server command and environment. */
    private async prepare(settings: LaunchSettings): Promise<Launch> {
        const interpreter = await chooseInterpreter(settings, launchScope()?.uri);
        const info = await probe(interpreter);
        const env: NodeJS.ProcessEnv = { ...process.env, PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' };
        if (settings.importStrategy === 'useBundled') {
            // Ours first, so the bundled pygls & co win over whatever the environment has.
            env.PYTHONPATH = [this.bundledPythonPath(info), process.env.PYTHONPATH].filter(Boolean).join(path.delimiter);
            delete env.PYTHONHOME;
        }
        // The server imports these; one probe under the server's environment turns a missing
        // package into a clear message instead of a crashed server.
        // libcst.native: libcst's compiled parser, which a package built for another platform lacks
        const checked = await probe(interpreter, ['gradguard', 'pygls', 'libcst', 'libcst.native'], env);
        const errors = checked.importErrors;
        if (errors.gradguard || errors.pygls) {
            const why = errors.gradguard ?? errors.pygls;
            throw new InterpreterProblem(
                settings.importStrategy === 'fromEnvironment'
                    ? `GradGuard is not installed for ${checked.executable} (${why}).`
                    : `The GradGuard server bundled with the extension does not load on ${checked.executable} (${why}).`,
                settings.importStrategy === 'fromEnvironment'
                    ? `Run \`${checked.executable} -m pip install gradguard\`, or set \`gradguard.importStrategy\` to \`useBundled\`.`
                    : 'Set `gradguard.importStrategy` to `fromEnvironment` and install gradguard in that interpreter.',
            );
        }
        if (errors.libcst) {
            // The server needs libcst (quick fixes); the package carries it for CPython 3.10-3.13.
            const version = checked.version.slice(0, 2).join('.');
            throw new InterpreterProblem(
                `GradGuard needs libcst, which it does not bundle for Python ${version} on this platform and which ${checked.executable} lacks (${errors.libcst}).`,
                `Run \`${checked.executable} -m pip install libcst\`, or set \`gradguard.interpreter\` to a Python 3.10-3.13.`,
            );
        }
        if (errors['libcst.native']) {
            const here = `${process.platform}-${process.arch}`;
            if (settings.importStrategy === 'useBundled') {
                // A .vsix for another platform (or architecture): its native libraries cannot load here.
                const builtFor = bundledWheelTag(bundledPaths(this.context.extensionPath).versionedLibs(checked.version[0], checked.version[1]));
                throw new InterpreterProblem(
                    `This GradGuard package is for another platform: its native libraries (libcst${builtFor ? `, built for ${builtFor}` : ''}) do not load on this ${here} machine (${errors['libcst.native']}).`,
                    `Install the GradGuard package for ${here} (gradguard-${this.context.extension.packageJSON.version}-${here}.vsix), or set \`gradguard.importStrategy\` to \`fromEnvironment\`.`,
                );
            }
            throw new InterpreterProblem(
                `The libcst installed for ${checked.executable} does not load its native parser (${errors['libcst.native']}).`,
                `Run \`${checked.executable} -m pip install --force-reinstall libcst\`.`,
            );
        }
        const [exe, ...extra] = interpreter.command;
        const folder = launchScope()?.uri.fsPath;
        return {
            interpreter,
            options: {
                command: exe,
                args: [...extra, '-m', 'gradguard', 'lsp'],
                transport: TransportKind.stdio,
                options: { env, cwd: folder && fs.existsSync(folder) ? folder : this.context.extensionPath },
            },
        };
    }

    /** PYTHONPATH for useBundled: libraries with compiled parts for this CPython, pure ones, the server. */
    private bundledPythonPath(info: ProbeResult): string {
        const paths = bundledPaths(this.context.extensionPath);
        const parts = [paths.libs, paths.tool];
        const versioned = paths.versionedLibs(info.version[0], info.version[1]);
        if (fs.existsSync(versioned)) {
            parts.unshift(versioned);
        } else {
            logWarn(`This GradGuard package carries no compiled libraries for Python ${info.version[0]}.${info.version[1]} (${versioned}).`);
        }
        if (!fs.existsSync(paths.tool)) {
            logWarn(`No bundled server at ${paths.tool}: this is a development checkout; run \`npm run package\`.`);
        }
        return parts.join(path.delimiter);
    }

    private clientOptions(): LanguageClientOptions {
        let crashes = 0;
        return {
            documentSelector: DOCUMENT_SELECTOR,
            outputChannel: this.channel,
            traceOutputChannel: this.channel,
            revealOutputChannelOn: RevealOutputChannelOn.Never,
            initializationOptions: { settings: settingsPayload(launchScope()) },
            // hovers may link to one command only: the graph of their finding
            markdown: { isTrusted: { enabledCommands: [SHOW_GRAPH_COMMAND] }, supportHtml: false },
            errorHandler: {
                error: () => ({ action: ErrorAction.Continue }),
                closed: () => {
                    crashes += 1;
                    if (crashes <= MAX_RESTARTS) {
                        logWarn(`The server exited; restarting (${crashes}/${MAX_RESTARTS}).`);
                        return { action: CloseAction.Restart, handled: true };
                    }
                    this.report(
                        new InterpreterProblem(
                            `The GradGuard server exited ${crashes} times and was not restarted.`,
                            'See "GradGuard: Show Logs", then run "GradGuard: Restart Server".',
                        ),
                    );
                    return { action: CloseAction.DoNotRestart, handled: true };
                },
            },
        };
    }

    /** Logs every problem; notifies once per distinct problem. */
    private report(err: unknown, extraLog?: string): void {
        const problem =
            err instanceof InterpreterProblem
                ? err
                : new InterpreterProblem(`GradGuard could not start: ${err}`, 'See "GradGuard: Show Logs".');
        logError(`${problem.message} ${problem.detail}${extraLog ? `\n${extraLog}` : ''}`);
        // Notifications show plain text: `code` spans become quotes.
        const text = `${problem.message} ${problem.detail}`.replace(/`([^`]*)`/g, '"$1"');
        if (text === this.lastProblem) {
            return;
        }
        this.lastProblem = text;
        void vscode.window.showErrorMessage(text, 'Open Settings', 'Show Logs').then((choice) => {
            if (choice === 'Open Settings') {
                void vscode.commands.executeCommand('workbench.action.openSettings', `${CONFIG_SECTION}.`);
            } else if (choice === 'Show Logs') {
                this.channel.show(true);
            }
        });
    }
}

/** The platform tag of the libcst wheel bundled in `dir` (e.g. `macosx_11_0_arm64`), if found. */
function bundledWheelTag(dir: string): string | undefined {
    try {
        const info = fs.readdirSync(dir).find((name) => /^libcst-.*\.dist-info$/.test(name));
        const wheel = info && fs.readFileSync(path.join(dir, info, 'WHEEL'), 'utf8');
        return wheel?.match(/^Tag: [^-\s]+-[^-\s]+-(\S+)$/m)?.[1];
    } catch {
        return undefined;
    }
}

/**
 * Keeps the server on push diagnostics (textDocument/publishDiagnostics). vscode-languageclient 9
 * never pulls diagnostics for notebook cells (microsoft/vscode-languageserver-node#1464, fixed only
 * in the 10.x line), so a server that chose pull because we advertised it would leave notebooks
 * without squiggles. Registered last, it removes what the built-in DiagnosticFeature advertised.
 */
class PushDiagnosticsOnly implements StaticFeature {
    getState() {
        return { kind: 'static' } as const;
    }
    fillClientCapabilities(capabilities: ClientCapabilities): void {
        delete capabilities.textDocument?.diagnostic;
        delete capabilities.workspace?.diagnostics;
    }
    initialize(): void {}
    clear(): void {}
}

/**
 * Tells the server that this client runs `gradguard.showGraph`, so that its code lenses, hovers
 * and code actions may offer it (capabilities.experimental.gradguard.showGraph).
 */
class ShowsGraphs implements StaticFeature {
    getState() {
        return { kind: 'static' } as const;
    }
    fillClientCapabilities(capabilities: ClientCapabilities): void {
        const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
        capabilities.experimental = { ...experimental, gradguard: { showGraph: true } };
    }
    initialize(): void {}
    clear(): void {}
}

function describeCommand(options: ServerOptions): string {
    const o = options as { command: string; args?: string[]; options?: { env?: NodeJS.ProcessEnv } };
    const pythonPath = o.options?.env?.PYTHONPATH;
    return `${[o.command, ...(o.args ?? [])].join(' ')}${pythonPath ? ` (PYTHONPATH=${pythonPath})` : ''}`;
}
