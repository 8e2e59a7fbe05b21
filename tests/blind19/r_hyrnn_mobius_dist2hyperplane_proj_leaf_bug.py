# Source: https://github.com/ferrine/hyrnn/issues/11
"""hyrnn (hyperbolic RNNs on geoopt): building the model with decision_type="hyp" crashes.

RNNBase with ``decision_type="hyp"`` builds two MobiusLinear projectors and a
``MobiusDist2Hyperplane`` classifier.  MobiusDist2Hyperplane.__init__ creates its normal vectors as
``geoopt.ManifoldParameter(tangent, manifold=sphere).proj_()``; geoopt's ``proj_`` writes the
projection back with ``copy_or_set_`` (``dest.copy_(source)`` / ``dest.set_(source)``), an in-place
op on a fresh leaf Parameter outside ``no_grad``, so torch raises "a leaf Variable that requires
grad has been used in an in-place operation" while the model is being constructed.

Fix (the maintainer in the thread: in-place methods on leaf parameters now need a ``no_grad``
context; applied in this twin the way MobiusLinear already does it for its bias): project the
tangent inside ``with torch.no_grad():``.  Stand-ins for geoopt (PoincareBall, Sphere,
ManifoldParameter, copy_or_set_, the poincare math) keep its structure; the sequence encoders
are plain ``nn.GRU`` (cell_type="eucl_gru") on random token batches.
"""
import torch
import torch.nn as nn


# ---- stand-in for geoopt.manifolds.poincare.math ----
class pmath:
    @staticmethod
    def _tanh(x):
        return x.clamp(-15, 15).tanh()

    @staticmethod
    def artanh(x):
        x = x.clamp(-1 + 1e-5, 1 - 1e-5)
        return 0.5 * (torch.log1p(x) - torch.log1p(-x))

    @staticmethod
    def project(x, c=1.0):
        norm = x.norm(dim=-1, keepdim=True).clamp_min(1e-5)
        maxnorm = (1 - 1e-3) / (c ** 0.5)
        return torch.where(norm > maxnorm, x / norm * maxnorm, x)

    @staticmethod
    def expmap0(u, c=1.0):
        sqrt_c = c ** 0.5
        u_norm = u.norm(dim=-1, keepdim=True).clamp_min(1e-5)
        return pmath.project(pmath._tanh(sqrt_c * u_norm) * u / (sqrt_c * u_norm), c=c)

    @staticmethod
    def mobius_add(x, y, c=1.0):
        x2 = x.pow(2).sum(dim=-1, keepdim=True)
        y2 = y.pow(2).sum(dim=-1, keepdim=True)
        xy = (x * y).sum(dim=-1, keepdim=True)
        num = (1 + 2 * c * xy + c * y2) * x + (1 - c * x2) * y
        denom = 1 + 2 * c * xy + c ** 2 * x2 * y2
        return num / (denom + 1e-5)

    @staticmethod
    def mobius_matvec(m, x, c=1.0):
        sqrt_c = c ** 0.5
        x_norm = x.norm(dim=-1, keepdim=True).clamp_min(1e-5)
        mx = x @ m.transpose(-1, -2)
        mx_norm = mx.norm(dim=-1, keepdim=True).clamp_min(1e-5)
        res_c = pmath._tanh(mx_norm / x_norm * pmath.artanh(sqrt_c * x_norm)) * mx / (mx_norm * sqrt_c)
        return pmath.project(res_c, c=c)

    @staticmethod
    def dist2plane(x, p, a, c=1.0, signed=False):
        sqrt_c = c ** 0.5
        diff_p_x = pmath.mobius_add(-p, x, c=c)
        p_x_dot_a = (diff_p_x * a).sum(dim=-1)
        if not signed:
            p_x_dot_a = p_x_dot_a.abs()
        num = 2 * sqrt_c * p_x_dot_a
        denom = (1 - c * diff_p_x.pow(2).sum(dim=-1)) * a.norm(dim=-1)
        return torch.asinh(num / denom.clamp_min(1e-15)) / sqrt_c


# ---- stand-in for geoopt ----
def copy_or_set_(dest, source):
    if dest.stride() != source.stride():
        return dest.set_(source)
    else:
        return dest.copy_(source)  # expect: GG108


class PoincareBall:
    def __init__(self, c=1.0):
        self.c = c
        self.default_order = 1

    def set_default_order(self, order):
        self.default_order = order
        return self

    def projx(self, x):
        return pmath.project(x, c=self.c)


class Sphere:
    default_order = 1

    def set_default_order(self, order):
        self.default_order = order
        return self

    def projx(self, x):
        return x / x.norm(dim=-1, keepdim=True)


class ManifoldParameter(nn.Parameter):
    def __new__(cls, data=None, manifold=None, requires_grad=True):
        instance = nn.Parameter.__new__(cls, data, requires_grad)
        instance.manifold = manifold
        return instance

    def proj_(self):
        return copy_or_set_(self, self.manifold.projx(self))


class geoopt:
    PoincareBall = PoincareBall
    ManifoldParameter = ManifoldParameter

    class manifolds:
        Sphere = Sphere


# ---- hyrnn/nets.py ----
def mobius_linear(input, weight, bias=None, hyperbolic_input=True, hyperbolic_bias=True, nonlin=None, c=1.0):
    if hyperbolic_input:
        output = pmath.mobius_matvec(weight, input, c=c)
    else:
        output = torch.nn.functional.linear(input, weight)
        output = pmath.expmap0(output, c=c)
    if bias is not None:
        if not hyperbolic_bias:
            bias = pmath.expmap0(bias, c=c)
        output = pmath.mobius_add(output, bias, c=c)
    output = pmath.project(output, c=c)
    return output


class MobiusLinear(torch.nn.Linear):
    def __init__(self, *args, hyperbolic_input=True, hyperbolic_bias=True, nonlin=None, c=1.0, order=1, **kwargs):
        super().__init__(*args, **kwargs)
        if self.bias is not None:
            if hyperbolic_bias:
                self.ball = manifold = geoopt.PoincareBall(c=c).set_default_order(order)
                self.bias = geoopt.ManifoldParameter(self.bias, manifold=manifold)
                with torch.no_grad():
                    self.bias.set_(pmath.expmap0(self.bias.normal_() / 4, c=c))
        with torch.no_grad():
            self.weight.normal_(std=1e-2)
        self.hyperbolic_bias = hyperbolic_bias
        self.hyperbolic_input = hyperbolic_input
        self.nonlin = nonlin

    def forward(self, input):
        return mobius_linear(input, weight=self.weight, bias=self.bias, hyperbolic_input=self.hyperbolic_input,
                             nonlin=self.nonlin, hyperbolic_bias=self.hyperbolic_bias, c=self.ball.c)


class MobiusDist2Hyperplane(torch.nn.Module):
    def __init__(self, in_features, out_features, c=1.0, order=1):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.ball = ball = geoopt.PoincareBall(c=c).set_default_order(order)
        self.sphere = sphere = geoopt.manifolds.Sphere().set_default_order(order)
        self.scale = torch.nn.Parameter(torch.zeros(out_features))
        point = torch.randn(out_features, in_features) / 4
        point = pmath.expmap0(point, c=c)
        tangent = torch.randn(out_features, in_features)
        self.point = geoopt.ManifoldParameter(point, manifold=ball)
        self.tangent = geoopt.ManifoldParameter(tangent, manifold=sphere).proj_()

    def forward(self, input):
        input = input.unsqueeze(-2)
        distance = pmath.dist2plane(x=input, p=self.point, a=self.tangent, c=self.ball.c, signed=True)
        return distance * self.scale.exp()


# ---- experiment_run/model.py (eucl embedding, eucl_gru cells, hyp decision) ----
class RNNBase(nn.Module):
    def __init__(self, vocab_size, embedding_dim, hidden_dim, project_dim, cell_type="eucl_gru",
                 decision_type="hyp", num_layers=1, num_classes=2, c=1.0, order=1):
        super(RNNBase, self).__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim)
        with torch.no_grad():
            self.embedding.weight.normal_()
        if decision_type == "eucl":
            self.projector = nn.Linear(hidden_dim * 2, project_dim)
            self.logits = nn.Linear(project_dim, num_classes)
        elif decision_type == "hyp":
            self.projector_source = MobiusLinear(hidden_dim, project_dim, c=c, order=order)
            self.projector_target = MobiusLinear(hidden_dim, project_dim, c=c, order=order)
            self.logits = MobiusDist2Hyperplane(project_dim, num_classes)
        self.ball = geoopt.PoincareBall(c).set_default_order(order)
        self.decision_type = decision_type
        self.num_layers = num_layers
        self.hidden_dim = hidden_dim
        self.c = c
        self.cell_source = nn.GRU(embedding_dim, self.hidden_dim, self.num_layers)
        self.cell_target = nn.GRU(embedding_dim, self.hidden_dim, self.num_layers)

    def forward(self, input):
        source_input, target_input, alignment = input
        batch_size = alignment.shape[0]
        source_input_data = self.embedding(source_input)
        target_input_data = self.embedding(target_input)
        zero_hidden = torch.zeros(self.num_layers, batch_size, self.hidden_dim)
        _, source_hidden = self.cell_source(source_input_data, zero_hidden)
        _, target_hidden = self.cell_target(target_input_data, zero_hidden)
        source_hidden = source_hidden[-1]
        target_hidden = target_hidden[-1][alignment]
        if self.decision_type == "hyp":
            source_hidden = pmath.expmap0(source_hidden, c=self.c)
            target_hidden = pmath.expmap0(target_hidden, c=self.c)
            source_projected = self.projector_source(source_hidden)
            target_projected = self.projector_target(target_hidden)
            projected = pmath.mobius_add(source_projected, target_projected, c=self.ball.c)
        else:
            projected = self.projector(torch.cat((source_hidden, target_hidden), dim=-1))
        logits = self.logits(projected)
        return logits


torch.manual_seed(0)
model = RNNBase(vocab_size=12, embedding_dim=8, hidden_dim=8, project_dim=6,
                cell_type="eucl_gru", decision_type="hyp", num_classes=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for step in range(5):
    source = torch.randint(0, 12, (7, 4))
    target = torch.randint(0, 12, (5, 4))
    alignment = torch.arange(4)
    labels = torch.randint(0, 2, (4,))
    logits = model((source, target, alignment))
    loss = criterion(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
