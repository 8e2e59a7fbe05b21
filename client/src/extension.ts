import * as vscode from 'vscode';
import { fixAll, showGraph, toggleInlayHints } from './commands';
import { SERVER_NAME, SHOW_GRAPH_COMMAND } from './constants';
import { GraphView } from './graphView';
import { createLogChannel, logInfo, showLogs } from './log';
import { onActiveInterpreterChanged } from './python';
import { ServerManager } from './server';
import { affectsLive, affectsRestart } from './settings';

let manager: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
    const channel = createLogChannel(SERVER_NAME);
    context.subscriptions.push(channel);
    logInfo(`GradGuard ${context.extension.packageJSON.version} activating`);

    manager = new ServerManager(context, channel);
    const server = manager;
    const graphs = new GraphView(() => server.languageClient);
    context.subscriptions.push(
        server,
        graphs,
        vscode.commands.registerCommand(SHOW_GRAPH_COMMAND, (uri?: string, position?: { line: number; character: number }) =>
            showGraph(graphs, uri, position),
        ),
        vscode.commands.registerCommand('gradguard.toggleInlayHints', toggleInlayHints),
        vscode.commands.registerCommand('gradguard.restart', () => server.restart('restart command')),
        vscode.commands.registerCommand('gradguard.showLogs', showLogs),
        vscode.commands.registerCommand('gradguard.fixAll', fixAll),
        vscode.workspace.onDidChangeConfiguration((e) => {
            if (affectsRestart(e)) {
                void server.restart('interpreter settings changed');
            } else if (affectsLive(e)) {
                void server.sendSettings();
            }
        }),
        vscode.workspace.onDidChangeWorkspaceFolders(() => server.restart('workspace folders changed')),
    );
    void onActiveInterpreterChanged(() => server.restart('Python interpreter changed')).then((d) => context.subscriptions.push(d));
    await server.restart('activation');
}

export async function deactivate(): Promise<void> {
    await manager?.stop();
    manager = undefined;
}
