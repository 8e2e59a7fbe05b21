import * as vscode from 'vscode';
import { CONFIG_SECTION, FIX_ALL_KIND } from './constants';
import { GraphView } from './graphView';

/** "GradGuard: Fix All": applies the server's source.fixAll.gradguard action to the active editor. */
export async function fixAll(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
        void vscode.window.showInformationMessage('GradGuard: Fix All works on the active Python editor.');
        return;
    }
    await vscode.commands.executeCommand('editor.action.codeAction', { kind: FIX_ALL_KIND, apply: 'first' });
}

/**
 * "GradGuard: Show Graph": the picture of the finding at the cursor. Code lenses, hovers and the
 * code action call it with the finding's document and position (LSP's 0-based line/character).
 */
export async function showGraph(
    view: GraphView,
    uri?: string | vscode.Uri,
    position?: { line: number; character: number },
): Promise<boolean> {
    if (uri !== undefined && position !== undefined) {
        const target = typeof uri === 'string' ? vscode.Uri.parse(uri) : uri;
        return view.show(target, new vscode.Position(position.line, position.character));
    }
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
        void vscode.window.showInformationMessage('GradGuard: Show Graph works on the active Python editor.');
        return false;
    }
    return view.show(editor.document.uri, editor.selection.active);
}

/** "GradGuard: Toggle Inlay Hints": flips `gradguard.inlayHints` where it is set (else for the user). */
export async function toggleInlayHints(): Promise<void> {
    const config = vscode.workspace.getConfiguration(CONFIG_SECTION);
    const inspected = config.inspect<boolean>('inlayHints');
    const target =
        inspected?.workspaceFolderValue !== undefined
            ? vscode.ConfigurationTarget.WorkspaceFolder
            : inspected?.workspaceValue !== undefined
              ? vscode.ConfigurationTarget.Workspace
              : vscode.ConfigurationTarget.Global;
    await config.update('inlayHints', !config.get<boolean>('inlayHints'), target);
}
