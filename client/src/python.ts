import { execFile } from 'child_process';
import * as vscode from 'vscode';
import { MIN_PYTHON } from './constants';
import { logInfo, logWarn } from './log';
import { LaunchSettings } from './settings';

/** Where the interpreter came from, for messages. */
export type InterpreterSource = 'setting' | 'python-extension' | 'path';

export interface Interpreter {
    /** Executable and any extra arguments, e.g. ["/usr/bin/python3"] or ["py", "-3.12"]. */
    command: string[];
    source: InterpreterSource;
}

export interface ProbeResult {
    version: [number, number, number];
    executable: string;
    /** Module name -> import error, for the modules asked about (absent: imported fine). */
    importErrors: Record<string, string>;
}

/** A problem that stops the server from starting, with what the user can do about it. */
export class InterpreterProblem extends Error {
    constructor(message: string, readonly detail: string) {
        super(message);
    }
}

// ---- the ms-python.python extension, used only when it is installed ----------------------

interface PythonEnvironmentsApi {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

async function pythonExtensionApi(): Promise<PythonEnvironmentsApi | undefined> {
    const ext = vscode.extensions.getExtension('ms-python.python');
    if (!ext) {
        return undefined;
    }
    try {
        const api = ext.isActive ? ext.exports : await ext.activate();
        return api?.environments as PythonEnvironmentsApi | undefined;
    } catch (err) {
        logWarn(`Python extension API unavailable: ${err}`);
        return undefined;
    }
}

/** Calls `listener` when the Python extension's active interpreter changes (no-op without it). */
export async function onActiveInterpreterChanged(listener: () => void): Promise<vscode.Disposable> {
    const api = await pythonExtensionApi();
    return api?.onDidChangeActiveEnvironmentPath(() => listener()) ?? new vscode.Disposable(() => undefined);
}

async function fromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
    const api = await pythonExtensionApi();
    if (!api) {
        return undefined;
    }
    try {
        const env = await api.resolveEnvironment(api.getActiveEnvironmentPath(resource));
        return env?.executable.uri?.fsPath;
    } catch (err) {
        logWarn(`Could not resolve the Python extension's interpreter: ${err}`);
        return undefined;
    }
}

/** `gradguard.interpreter` wins; else the Python extension's interpreter; else python3 on PATH. */
export async function chooseInterpreter(settings: LaunchSettings, resource?: vscode.Uri): Promise<Interpreter> {
    if (settings.interpreter.length > 0) {
        return { command: settings.interpreter, source: 'setting' };
    }
    const fromExtension = await fromPythonExtension(resource);
    if (fromExtension) {
        return { command: [fromExtension], source: 'python-extension' };
    }
    return { command: [process.platform === 'win32' ? 'python' : 'python3'], source: 'path' };
}

// ---- probing ---------------------------------------------------------------------------

// Runs on any Python (also 2.x) so that a too-old interpreter is reported as such.
const PROBE = [
    'import sys, json',
    'r = {"version": list(sys.version_info[:3]), "executable": sys.executable, "errors": {}}',
    'for m in sys.argv[1:]:',
    '    try: __import__(m)',
    '    except Exception as e: r["errors"][m] = "%s: %s" % (type(e).__name__, e)',
    'print(json.dumps(r))',
].join('\n');

function describe(interpreter: Interpreter): string {
    const where = {
        setting: 'the `gradguard.interpreter` setting',
        'python-extension': "the Python extension's selected interpreter",
        path: '`PATH`',
    }[interpreter.source];
    return `${interpreter.command.join(' ')} (from ${where})`;
}

/** Runs the interpreter once; checks the version and, optionally, that modules import under `env`. */
export function probe(interpreter: Interpreter, modules: string[] = [], env?: NodeJS.ProcessEnv): Promise<ProbeResult> {
    const [exe, ...extra] = interpreter.command;
    return new Promise((resolve, reject) => {
        execFile(exe, [...extra, '-c', PROBE, ...modules], { timeout: 30_000, env: env ?? process.env }, (err, stdout, stderr) => {
            const fix =
                interpreter.source === 'setting'
                    ? 'Fix or clear the `gradguard.interpreter` setting.'
                    : `Install Python ${MIN_PYTHON.join('.')} or newer, or set \`gradguard.interpreter\` to one.`;
            if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
                reject(new InterpreterProblem(`GradGuard could not find Python: ${describe(interpreter)} does not exist.`, fix));
                return;
            }
            if (err && (err as NodeJS.ErrnoException).code === 'EACCES') {
                reject(new InterpreterProblem(`GradGuard could not run Python: ${describe(interpreter)} is not executable.`, fix));
                return;
            }
            let parsed: { version: [number, number, number]; executable: string; errors: Record<string, string> };
            try {
                parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '');
            } catch {
                const why = (stderr || String(err ?? '')).trim().split('\n').pop() ?? '';
                reject(new InterpreterProblem(`GradGuard could not run Python: ${describe(interpreter)} failed${why ? ` (${why})` : ''}.`, fix));
                return;
            }
            const [major, minor] = parsed.version;
            if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
                reject(
                    new InterpreterProblem(
                        `GradGuard needs Python ${MIN_PYTHON.join('.')} or newer; ${describe(interpreter)} is Python ${parsed.version.join('.')}.`,
                        fix,
                    ),
                );
                return;
            }
            logInfo(`Python ${parsed.version.join('.')} at ${parsed.executable} (from ${interpreter.source})`);
            resolve({ version: parsed.version, executable: parsed.executable, importErrors: parsed.errors });
        });
    });
}
