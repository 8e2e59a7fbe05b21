// Bundles the extension client (client/src/extension.ts and vscode-languageclient) into out/extension.js.
// Usage: node esbuild.js [--production] [--watch] [--outdir DIR]
const esbuild = require('esbuild');
const path = require('path');

const args = process.argv.slice(2);
const production = args.includes('--production');
const watch = args.includes('--watch');
const outdirIndex = args.indexOf('--outdir');
const outdir = outdirIndex >= 0 ? path.resolve(args[outdirIndex + 1]) : path.join(__dirname, 'out');

async function main() {
    const ctx = await esbuild.context({
        entryPoints: [path.join(__dirname, 'client', 'src', 'extension.ts')],
        bundle: true,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        outfile: path.join(outdir, 'extension.js'),
        external: ['vscode'],
        minify: production,
        sourcemap: !production,
        sourcesContent: false,
        logLevel: 'warning',
    });
    if (watch) {
        await ctx.watch();
    } else {
        await ctx.rebuild();
        await ctx.dispose();
    }
}

main().catch((err) => {
    console.error(err);
    process.exit(1);
});
