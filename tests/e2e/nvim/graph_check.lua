-- Run after docs/editors.md's init.lua and :GradGuardGraph snippets (see run.sh): the picture
-- of the GG101 finding of two_losses.py opens as text in a split.
vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 100)
local d = vim.diagnostic.get(0)[1]
vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
local source = vim.api.nvim_get_current_buf()
local text = ''
-- the hover index follows the diagnostics after a pause: ask until a picture comes
vim.wait(20000, function()
  if vim.api.nvim_get_current_buf() == source then
    vim.cmd('GradGuardGraph')
    vim.wait(2000, function() return vim.api.nvim_get_current_buf() ~= source end, 50)
  end
  text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  return vim.api.nvim_get_current_buf() ~= source
end, 500)
local ok = text:find('GG101 error at line 10', 1, true) and text:find('walks them again: raises', 1, true)
io.stdout:write(string.format('[nvim-e2e] %s :GradGuardGraph (docs/editors.md) shows the picture of the finding — %s\n',
  ok and 'PASS' or 'FAIL', (text:gsub('\n', ' | ')):sub(1, 160)))
vim.cmd(ok and 'qall!' or 'cquit! 1')
