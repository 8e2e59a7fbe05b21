import * as os from 'os';
import * as vscode from 'vscode';
import { CONFIG_SECTION } from './constants';

/**
 * Settings the server reads and can apply while running: sent as initializationOptions and
 * with workspace/didChangeConfiguration, without a restart. Defaults live only in package.json.
 */
export const LIVE_SETTINGS = ['enable', 'run', 'select', 'ignore', 'severity', 'codeLens', 'inlayHints', 'diagnosticScope'] as const;
/** Settings that decide which process runs: changing one restarts the server. */
export const RESTART_SETTINGS = ['interpreter', 'importStrategy'] as const;

export type ImportStrategy = 'useBundled' | 'fromEnvironment';

export interface ServerSettings {
    enable: boolean;
    run: 'onType' | 'onSave';
    select: string[];
    ignore: string[];
    severity: Record<string, string>;
    codeLens: 'findings' | 'all' | 'off';
    inlayHints: boolean;
    diagnosticScope: 'openFiles' | 'workspace';
}

export interface LaunchSettings {
    interpreter: string[];
    importStrategy: ImportStrategy;
}

function config(scope?: vscode.ConfigurationScope): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration(CONFIG_SECTION, scope);
}

/** The scope that launch settings are read from: the first workspace folder, if any. */
export function launchScope(): vscode.WorkspaceFolder | undefined {
    return vscode.workspace.workspaceFolders?.[0];
}

export function readServerSettings(scope?: vscode.ConfigurationScope): ServerSettings {
    const c = config(scope);
    // get() without a default falls back to the manifest's default.
    const settings: Record<string, unknown> = {};
    for (const key of LIVE_SETTINGS) {
        settings[key] = c.get(key);
    }
    return settings as unknown as ServerSettings;
}

export function readLaunchSettings(folder = launchScope()): LaunchSettings {
    const c = config(folder);
    const interpreter = (c.get<string[]>('interpreter') ?? []).map((part) => expandVariables(part, folder));
    return {
        interpreter: interpreter.filter((part) => part.length > 0),
        importStrategy: c.get<ImportStrategy>('importStrategy') ?? 'useBundled',
    };
}

/** The payload of initializationOptions and of workspace/didChangeConfiguration `settings`. */
export function settingsPayload(scope?: vscode.ConfigurationScope): { [CONFIG_SECTION]: ServerSettings } {
    return { [CONFIG_SECTION]: readServerSettings(scope) };
}

export function affectsRestart(e: vscode.ConfigurationChangeEvent): boolean {
    return RESTART_SETTINGS.some((key) => e.affectsConfiguration(`${CONFIG_SECTION}.${key}`));
}

export function affectsLive(e: vscode.ConfigurationChangeEvent): boolean {
    return LIVE_SETTINGS.some((key) => e.affectsConfiguration(`${CONFIG_SECTION}.${key}`));
}

/** Expand `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in a setting value. */
export function expandVariables(value: string, folder?: vscode.WorkspaceFolder): string {
    let out = value.replace(/^~(?=$|[\\/])/, os.homedir());
    out = out.replace(/\$\{userHome\}/g, os.homedir());
    if (folder) {
        out = out.replace(/\$\{workspaceFolder\}/g, folder.uri.fsPath);
    }
    out = out.replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => process.env[name] ?? '');
    return out;
}
