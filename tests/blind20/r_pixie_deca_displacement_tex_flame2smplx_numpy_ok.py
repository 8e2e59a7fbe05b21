# Source: https://github.com/yfeng95/PIXIE/pull/31
"""PIXIE ``demos/demo_fit_body.py`` with ``--deca_path``: after PIXIE regresses the body, DECA is
run on the cropped face (when the moderator trusts the head crop) and its detail displacement
map is converted to the SMPL-X UV layout with ``Visualizer.tex_flame2smplx``.

``tex_flame2smplx`` does ``flame_texture[0].cpu().numpy()``.  PIXIE's own albedo is fine (its
encoder runs under ``@torch.no_grad()`` and FLAMETex only uses buffers), but DECA's ``encode``
runs its detail encoder outside ``no_grad`` and ``decode`` builds the displacement map from it, so
``deca_opdict['displacement_map']`` requires grad and ``.numpy()`` raises "Can't call numpy() on
Tensor that requires grad" -- fixed here as in PR #31, with ``.cpu().detach().numpy()``.

The PR only shows the one-line fix, not the failing call; PIXIE's own tensors never require grad
there, so this reproduces the path where they do: the demo's documented ``--deca_path`` branch.

Stand-ins: tiny PIXIE (encoder under no_grad, FLAMETex with buffers, moderator weights), a tiny
DECA (coarse encoder under no_grad, detail encoder/decoder with grad, as in DECA's
``encode``/``decode``/``run``), the FLAME->SMPL-X cached UV correspondences (random), and an
in-memory stand-in for the cropped-face image file; 32x32 textures, two test images.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

_FILES = {}  # stand-in for the files cv2.imwrite / imread would touch


def texture_flame2smplx(cached_data, flame_texture, smplx_texture):
    ''' Convert flame texture map (face-only) into smplx texture map (includes body texture)
    TODO: pytorch version ==> grid sample
    '''
    if smplx_texture.shape[0] != smplx_texture.shape[1]:
        print('SMPL-X texture not squared (%d != %d)' % (smplx_texture[0], smplx_texture[1]))
        return
    if smplx_texture.shape[0] != cached_data['target_resolution']:
        print('SMPL-X texture size does not match cached image resolution (%d != %d)' % (smplx_texture.shape[0], cached_data['target_resolution']))
        return
    x_coords = cached_data['x_coords']
    y_coords = cached_data['y_coords']
    target_pixel_ids = cached_data['target_pixel_ids']
    source_uv_points = cached_data['source_uv_points']

    source_tex_coords = np.zeros_like((source_uv_points)).astype(int)
    source_tex_coords[:, 0] = np.clip(flame_texture.shape[0]*(1.0-source_uv_points[:,1]), 0.0, flame_texture.shape[0]).astype(int)
    source_tex_coords[:, 1] = np.clip(flame_texture.shape[1]*(source_uv_points[:,0]), 0.0, flame_texture.shape[1]).astype(int)

    smplx_texture[y_coords[target_pixel_ids].astype(int), x_coords[target_pixel_ids].astype(int), :] = flame_texture[source_tex_coords[:,0], source_tex_coords[:,1]]

    return smplx_texture


class FLAMETex(nn.Module):
    def __init__(self, n_tex=8, size=32):
        super(FLAMETex, self).__init__()
        self.size = size
        texture_mean = torch.rand(1, 1, size * size * 3)
        texture_basis = torch.randn(1, size * size * 3, n_tex) * 0.01
        self.register_buffer('texture_mean', texture_mean)
        self.register_buffer('texture_basis', texture_basis)

    def forward(self, texcode=None):
        texture = self.texture_mean + (self.texture_basis*texcode[:,None,:]).sum(-1)
        texture = texture.reshape(texcode.shape[0], self.size, self.size, 3).permute(0,3,1,2)
        texture = texture[:,[2,1,0], :,:]
        return texture


class PIXIE(nn.Module):
    def __init__(self, n_tex=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                     nn.Flatten(), nn.Linear(8, n_tex + 2))
        self.flametex = FLAMETex(n_tex)
        self.n_tex = n_tex

    @torch.no_grad()
    def encode(self, data, threthold=True, keep_local=True, copy_and_paste=False):
        feats = self.encoder(data['body']['image'])
        head_w = torch.softmax(feats[:, self.n_tex:] + torch.tensor([0.0, 3.0]), dim=1)  # confident head crop
        return {'body': {'tex': feats[:, :self.n_tex]},
                'moderator_weight': {'head': head_w}}

    def decode(self, param_dict, param_type):
        prediction = {}
        prediction['albedo'] = self.flametex(param_dict['tex'])
        return prediction


class DECA(nn.Module):
    def __init__(self, size=32):
        super().__init__()
        self.E_flame = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 16))
        self.E_detail = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 16))
        self.D_detail = nn.Sequential(nn.Linear(32, size * size), nn.Tanh())
        self.size = size

    def encode(self, images, use_detail=True):
        if use_detail:
            # use_detail is for training detail model, need to set coarse model as eval mode
            with torch.no_grad():
                parameters = self.E_flame(images)
        else:
            parameters = self.E_flame(images)
        codedict = {'shape': parameters, 'images': images}
        if use_detail:
            detailcode = self.E_detail(images)
            codedict['detail'] = detailcode
        return codedict

    def decode(self, codedict):
        uv_z = self.D_detail(torch.cat([codedict['shape'], codedict['detail']], dim=1))
        opdict = {'displacement_map': uv_z.view(-1, 1, self.size, self.size) * 0.01}
        return opdict, {}

    def run(self, imagepath, iscrop=True):
        images = _FILES[imagepath]
        codedict = self.encode(images)
        opdict, visdict = self.decode(codedict)
        return codedict, opdict, visdict


class Visualizer(object):
    def __init__(self, size=32):
        rng = np.random.RandomState(0)
        self.smplx_texture = rng.rand(size, size, 3)
        n = 200
        self.cached_data = {
            'target_resolution': size,
            'x_coords': rng.randint(0, size, n).astype(float),
            'y_coords': rng.randint(0, size, n).astype(float),
            'target_pixel_ids': np.arange(n),
            'source_uv_points': rng.uniform(0.01, 0.99, (n, 2)),
        }

    def tex_flame2smplx(self, flame_texture, smplx_texture=None):
        ''' Convert flame texture to smplx texture
        '''
        if torch.is_tensor(flame_texture):
            device = flame_texture.device
            dtype = flame_texture.dtype
            flame_texture = flame_texture[0].cpu().detach().numpy().transpose(1,2,0)
            if smplx_texture is None:
                smplx_texture = self.smplx_texture
            smplx_texture = texture_flame2smplx(self.cached_data, flame_texture, smplx_texture)
            smplx_texture = torch.from_numpy(smplx_texture.transpose(2,0,1)).to(device).to(dtype).unsqueeze(0)
        else:
            smplx_texture = texture_flame2smplx(self.cached_data, flame_texture, self.smplx_texture)
        return smplx_texture


def main(args):
    torch.manual_seed(0)
    testdata = [{'image': torch.rand(3, 32, 32), 'head_image': torch.rand(3, 32, 32), 'name': f'img{i}'}
                for i in range(2)]
    pixie = PIXIE()
    visualizer = Visualizer()
    if args['deca_path']:
        deca = DECA()
        use_deca = True
    else:
        use_deca = False

    for i, batch in enumerate(testdata):
        batch['image'] = batch['image'].unsqueeze(0)
        name = batch['name']
        data = {
            'body': batch
        }
        param_dict = pixie.encode(data, threthold=True, keep_local=True, copy_and_paste=False)
        moderator_weight = param_dict['moderator_weight']
        codedict = param_dict['body']
        opdict = pixie.decode(codedict, param_type='body')
        opdict['albedo'] = visualizer.tex_flame2smplx(opdict['albedo'])
        # run deca if deca is available and moderator thinks information from face crops is reliable
        if args['deca_path'] is not None and param_dict['moderator_weight']['head'][0,1].item()>0.6:
            cropped_face_savepath = f'{name}_facecrop.jpg'
            _FILES[cropped_face_savepath] = data['body']['head_image'][None]
            _, deca_opdict, _ = deca.run(cropped_face_savepath)
            flame_displacement_map = deca_opdict['displacement_map']
            opdict['displacement_map'] = visualizer.tex_flame2smplx(flame_displacement_map)
        print(name, tuple(opdict['albedo'].shape), use_deca)


main({'deca_path': 'DECA', 'saveVis': False})
