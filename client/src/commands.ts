import * as vscode from 'vscode';
import { FIX_ALL_KIND } from './constants';

/** "GradGuard: Fix All": applies the server's source.fixAll.gradguard action to the active editor. */
export async function fixAll(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
        void vscode.window.showInformationMessage('GradGuard: Fix All works on the active Python editor.');
        return;
    }
    await vscode.commands.executeCommand('editor.action.codeAction', { kind: FIX_ALL_KIND, apply: 'first' });
}
