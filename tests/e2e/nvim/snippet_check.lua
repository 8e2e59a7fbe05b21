-- Run after docs/editors.md's Neovim 0.7 init.lua snippet has opened a buffer (see run.sh):
-- the snippet's client must attach and publish the one GG101 finding of two_losses.py.
vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local d = vim.diagnostic.get(0)
local clients = #vim.tbl_keys(vim.lsp.buf_get_clients(0))
local ok = clients == 1 and #d == 1 and d[1].lnum == 9
io.stdout:write(string.format('[nvim-e2e] %s the docs/editors.md init.lua snippet attaches and reports — %d client(s), %d diagnostic(s)%s\n',
  ok and 'PASS' or 'FAIL', clients, #d, d[1] and (' on line ' .. (d[1].lnum + 1)) or ''))
vim.cmd(ok and 'qall!' or 'cquit! 1')
