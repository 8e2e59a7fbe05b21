import * as vscode from 'vscode';

/**
 * One LogOutputChannel ("GradGuard") for the extension and the language client.
 * The server's window/logMessage output and the LSP trace land in the same channel.
 */
let channel: vscode.LogOutputChannel | undefined;

export function createLogChannel(name: string): vscode.LogOutputChannel {
    channel = vscode.window.createOutputChannel(name, { log: true });
    return channel;
}

export function logInfo(message: string): void {
    channel?.info(message);
}

export function logWarn(message: string): void {
    channel?.warn(message);
}

export function logError(message: string): void {
    channel?.error(message);
}

export function showLogs(): void {
    channel?.show(true);
}
