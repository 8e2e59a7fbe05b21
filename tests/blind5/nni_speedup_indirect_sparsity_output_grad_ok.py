# Source: https://github.com/microsoft/nni/issues/5299
"""NNI's mask inference with the fix of PR 5343: AutoMaskInference calls
`self.output.retain_grad()` on its output when it requires grad, so ModelSpeedup's reads of
`last_output.grad` and the node's reads of `self.output.grad` are reads of a tensor that keeps its
gradient (the one the speedup hands back), without torch's non-leaf warning. The classes are nni's
at the PR's parent, reduced to modules; a three-layer MLP whose first Linear has pruned rows
stands in for the reporter's VGG."""
import torch
import torch.nn as nn

STD_DELTA = 1e-6


class AutoMaskInference:
    def __init__(self, module, dummy_input, in_masks=None, weight_mask=None):
        self.module = module
        self.dummy_input = dummy_input
        self.in_masks = in_masks if in_masks is not None else [None] * len(self.dummy_input)
        for in_id, _ in enumerate(self.in_masks):
            if self.in_masks[in_id] is None:
                self.in_masks[in_id] = torch.ones_like(self.dummy_input[in_id])

        # Initialize the mask for output tensors
        self.output = self.module(*dummy_input)
        if self.output.requires_grad:
            self.output.retain_grad()   # issue #5299
        self.output_mask = torch.ones_like(self.output)

        # Initialize the mask for the parameters
        self.weights = {}
        self.weight_mask = {}
        if weight_mask:
            self.weight_mask.update(weight_mask)
        for name, para in module.named_parameters():
            self.weights[name] = para
            if name not in self.weight_mask:
                self.weight_mask[name] = torch.ones_like(para.data)

    def requires_grad_(self, flag=True):
        for t_in in self.dummy_input:
            t_in.requires_grad_(flag)
        for para_name in self.weights:
            self.weights[para_name].requires_grad_(flag)

    def apply_mask(self):
        with torch.no_grad():
            for tid, in_tensor in enumerate(self.dummy_input):
                in_tensor.data = in_tensor.data * self.in_masks[tid]
            for para in self.weights:
                self.weights[para].data *= self.weight_mask[para].data

    def isconstants(self, tout):
        out_mask = torch.ones_like(tout)
        constant = torch.zeros_like(tout)
        # calculate the std of the output among batch dimension
        std = torch.std(tout, dim=0)
        mean = torch.mean(tout, dim=0)
        mask_pos = std < STD_DELTA
        out_mask[:, mask_pos] = 0
        constant[:, mask_pos] = mean[mask_pos]
        return out_mask, constant

    def update_direct_sparsity(self):
        with torch.no_grad():
            self.apply_mask()
            out = self.module(*self.dummy_input)
            out_mask, constant = self.isconstants(out.clone().detach())
        self.output_mask = self.output_mask * out_mask
        self.out_constant = constant

    def update_indirect_sparsity(self):
        if isinstance(self.output, torch.Tensor) and self.output.grad is not None:
            # if output have gradient which means this node has successor
            # nodes and the successor nodes have already update their indirect
            # sparsity
            gradient_sum = torch.sum(torch.abs(self.output.grad.data), dim=0)
            _grad_zero = gradient_sum == 0
            for batchid in range(self.output.size(0)):
                # set the same mask value for the whole batche
                self.output_mask[batchid][_grad_zero] = 0

        self.requires_grad_(True)
        self.apply_mask()
        tmp_dummy_input = [x.clone() for x in self.dummy_input]
        output = self.module(*tmp_dummy_input)
        if output.grad_fn is None:
            return
        output.backward(self.output_mask)

        # update the sparsity of the paramters
        for para_name in self.weights:
            grad_zero = self.weights[para_name].grad.data == 0
            self.weight_mask[para_name][grad_zero] = 0


class ModelSpeedup:
    def __init__(self, model, dummy_input, masks):
        self.bound_model = model
        self.masks = dict(masks)
        self.internal_result = {'input': dummy_input}
        self.auto_inferences = {}
        # the traced graph of an nn.Sequential: node i reads output i-1
        self.nodes = [(str(i), 'input' if i == 0 else 'out%d' % (i - 1), 'out%d' % i)
                      for i in range(len(model))]

    def _prepare_dummy_input(self, node):
        _, _input, _ = node
        # The detach operation here is for the in-place operation.
        return [self.internal_result[_input].detach()], [_input]

    def update_direct_sparsity(self, node):
        module_name, _, out_debugname = node
        dummy_input, input_debugname = self._prepare_dummy_input(node)
        in_masks = [self.masks.get(debugname) for debugname in input_debugname]
        module = self.bound_model[int(module_name)]
        _auto_infer = AutoMaskInference(module, dummy_input, in_masks, self.masks.get(module_name))
        self.auto_inferences[module_name] = _auto_infer
        _auto_infer.update_direct_sparsity()
        _auto_infer.input_debugname = input_debugname
        self.masks[out_debugname] = _auto_infer.output_mask
        self.internal_result[out_debugname] = _auto_infer.output
        self.masks[module_name] = _auto_infer.weight_mask

    def update_indirect_sparsity(self, node):
        module_name = node[0]
        print('Update the indirect sparsity for the', module_name)
        auto_infer = self.auto_inferences[module_name]
        auto_infer.update_indirect_sparsity()
        # pass the gradient to the predecessor nodes
        for in_id, tin in enumerate(auto_infer.dummy_input):
            debug_name = auto_infer.input_debugname[in_id]
            last_output = self.internal_result[debug_name]
            if last_output.grad is not None and tin.grad is not None:
                last_output.grad.data += tin.grad.data
            elif last_output.grad is None:
                last_output.grad = tin.grad

    def infer_modules_masks(self):
        for node in self.nodes:
            self.update_direct_sparsity(node)
        for node in reversed(self.nodes):
            self.update_indirect_sparsity(node)


model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
# a pruner's masks: the first Linear loses half of its output neurons
weight_mask = torch.ones(16, 8)
weight_mask[::2] = 0
bias_mask = torch.ones(16)
bias_mask[::2] = 0
speedup = ModelSpeedup(model, torch.rand(8, 8), {'0': {'weight': weight_mask, 'bias': bias_mask}})
speedup.infer_modules_masks()
print({name: int(mask['weight'].sum()) for name, mask in speedup.masks.items()
       if isinstance(mask, dict) and 'weight' in mask})
