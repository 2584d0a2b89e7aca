"""The OFRecord image pipeline (flow.data.OFRecordImageDecoder[RandomCrop], flow.image.Resize /
CropMirrorNormalize / random_crop / flip / batch_align, flow.random.CoinFlip) on JPEG records
written with PIL: decoding against PIL, resizing against torch.nn.functional.interpolate,
cropping and normalizing against numpy."""
import io
import typing

import numpy as np
import pytest
import torch

import oneflow as flow
import oneflow.typing as tp
from oneflow.core.record import record_pb2
from oneflow.framework import image_pipeline
from oneflow.framework.ofrecord_reader import write_part

Image = pytest.importorskip("PIL.Image")
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not flow._oneflow_internal.image_decoding_available(),
                       reason="built without libjpeg"),
]

SIZES = [(20, 24), (31, 17), (16, 16), (25, 40), (18, 33), (40, 22)]  # (height, width)


def _encode(pixels, mode):
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode).save(buffer, format="JPEG", quality=92)
    return buffer.getvalue()


def _pil_decode(data, mode="RGB"):
    image = Image.open(io.BytesIO(data))
    if mode == "L":  # have libjpeg decode to grayscale itself, as the GRAY color space does
        image.draft("L", image.size)
    return np.asarray(image.convert(mode))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """Records with a color JPEG ("encoded"), a grayscale JPEG ("gray") and a label."""
    rng = np.random.RandomState(0)
    path = tmp_path_factory.mktemp("images")
    records, encoded = [], []
    for index, (height, width) in enumerate(SIZES):
        # Smooth content (a gradient plus noise) so JPEG keeps it recognisable.
        y, x = np.mgrid[0:height, 0:width]
        rgb = np.stack([x * 255 // width, y * 255 // height, (x + y) * 127 // (width + height)],
                       -1) + rng.randint(0, 30, size=(height, width, 3))
        rgb = rgb.clip(0, 255).astype(np.uint8)
        color, gray = _encode(rgb, "RGB"), _encode(rgb[..., 0].copy(), "L")
        encoded.append((color, gray))
        records.append(record_pb2.OFRecord(feature={
            "encoded": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[color])),
            "gray": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[gray])),
            "class/label": record_pb2.Feature(int32_list=record_pb2.Int32List(value=[index])),
        }))
    write_part(str(path / "part-0"), records)
    return str(path), encoded


def _run(job_body, outputs=1, devices=1):
    flow.clear_default_session()
    flow.config.cpu_device_num(devices)
    annotation = tp.Numpy if outputs == 1 else typing.Tuple[tuple([tp.Numpy] * outputs)]

    @flow.global_function(type="predict")
    def job() -> annotation:
        with flow.scope.placement("cpu", "0:0-%d" % (devices - 1)):
            return job_body()

    return job


def _reader(path, batch_size=len(SIZES)):
    return flow.data.ofrecord_reader(path, batch_size=batch_size, data_part_num=1)


def _batch_align(images, height=40, width=40, channels=3):
    return flow.image.batch_align(images, shape=(height, width, channels), dtype=flow.uint8,
                                  alignment=1)


@pytest.mark.parametrize("color_space", ["RGB", "BGR"])
def test_decoder_matches_pil(dataset, color_space):
    path, encoded = dataset
    job = _run(lambda: _batch_align(flow.data.OFRecordImageDecoder(
        _reader(path), "encoded", color_space=color_space)))
    out = job()
    for index, (height, width) in enumerate(SIZES):
        expected = _pil_decode(encoded[index][0])
        if color_space == "BGR":
            expected = expected[..., ::-1]
        np.testing.assert_array_equal(out[index, :height, :width], expected)
        assert not out[index, height:].any() and not out[index, :, width:].any()


def test_gray_decoding(dataset):
    path, encoded = dataset

    def body():
        records = _reader(path)
        gray = flow.data.OFRecordImageDecoder(records, "gray", color_space="GRAY")
        luma = flow.data.OFRecordImageDecoder(records, "encoded", color_space="GRAY")
        return _batch_align(gray, channels=1), _batch_align(luma, channels=1)

    gray, luma = _run(body, outputs=2)()
    for index, (height, width) in enumerate(SIZES):
        np.testing.assert_array_equal(gray[index, :height, :width, 0],
                                      _pil_decode(encoded[index][1], "L"))
        np.testing.assert_array_equal(luma[index, :height, :width, 0],
                                      _pil_decode(encoded[index][0], "L"))


def _torch_resize(image, height, width, mode):
    x = torch.from_numpy(image.astype(np.float32)).permute(2, 0, 1)[None]
    if mode == "area":
        y = torch.nn.functional.interpolate(x, size=(height, width), mode="area")
    elif mode == "nearest":
        y = torch.nn.functional.interpolate(x, size=(height, width), mode="nearest")
    else:
        y = torch.nn.functional.interpolate(x, size=(height, width), mode=mode,
                                            align_corners=False)
    return y[0].permute(1, 2, 0).round().clamp(0, 255).numpy()


@pytest.mark.parametrize("interpolation, torch_mode, size", [
    ("bilinear", "bilinear", (30, 50)), ("bilinear", "bilinear", (11, 9)),
    ("nearest_neighbor", "nearest", (30, 50)), ("nearest_neighbor", "nearest", (7, 13)),
    ("bicubic", "bicubic", (30, 50)), ("auto", "bilinear", (45, 60)),
])
def test_resize_to_fixed_size_matches_torch(dataset, interpolation, torch_mode, size):
    path, encoded = dataset
    height, width = size

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB")
        out, scale, new_size = flow.image.Resize(images, target_size=(width, height),
                                                 interpolation_type=interpolation)
        assert new_size is None and out.shape == (len(SIZES), height, width, 3)
        return out, scale

    out, scale = _run(body, outputs=2)()
    for index, (h, w) in enumerate(SIZES):
        expected = _torch_resize(_pil_decode(encoded[index][0]), height, width, torch_mode)
        tolerance = 0 if torch_mode == "nearest" else 1
        assert np.abs(out[index].astype(float) - expected).max() <= tolerance, index
        np.testing.assert_allclose(scale[index], [width / w, height / h], rtol=1e-6)


def test_area_resize_averages_blocks(dataset):
    """Shrinking by whole factors with "area" (and "auto") averages each block, as avg pooling."""
    path, encoded = dataset

    def body():
        images = flow.image.random_crop(  # 16x16 crops of every image: whole factors of 8x8
            flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB"),
            random_area=[1.0, 1.0], random_aspect_ratio=[1.0, 1.0], num_attempts=1)
        return _batch_align(images, 40, 40)

    def resized():
        images = flow.image.random_crop(
            flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB"),
            random_area=[1.0, 1.0], random_aspect_ratio=[1.0, 1.0], num_attempts=1)
        return flow.image.Resize(images, target_size=(8, 8), interpolation_type="auto")[0]

    # Only the square image (16x16) is cropped whole; the check uses it.
    square = SIZES.index((16, 16))
    whole = _run(body)()[square, :16, :16].astype(np.float32)
    out = _run(resized)()[square]
    expected = whole.reshape(8, 2, 8, 2, 3).mean(axis=(1, 3))
    assert np.abs(out - np.round(expected)).max() <= 1


def test_resize_keep_aspect_ratio(dataset):
    path, encoded = dataset

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB")
        out, scale, new_size = flow.image.Resize(images, target_size=20, keep_aspect_ratio=True,
                                                 max_size=36, interpolation_type="bilinear")
        return _batch_align(out, 40, 40), scale, new_size

    out, scale, new_size = _run(body, outputs=3)()
    for index, (h, w) in enumerate(SIZES):
        factor = 20 / min(h, w)
        if max(h, w) * factor > 36:  # max_size bounds the longer side
            factor = 36 / max(h, w)
        expected_w, expected_h = int(round(w * factor)), int(round(h * factor))
        np.testing.assert_array_equal(new_size[index], [expected_w, expected_h])
        np.testing.assert_allclose(scale[index], [expected_w / w, expected_h / h], rtol=1e-6)
        expected = _torch_resize(_pil_decode(encoded[index][0]), expected_h, expected_w,
                                 "bilinear")
        assert np.abs(out[index, :expected_h, :expected_w] - expected).max() <= 1


def test_keep_aspect_size_rule_from_oneflow_docs():
    # OneFlow's image_target_resize example: a 349 x 367 image, target 256, shorter side.
    assert image_pipeline.keep_aspect_size(349, 367, 256, 0, 512, False) == (256, 269)
    assert image_pipeline.keep_aspect_size(100, 300, 50, 0, 120, False) == (40, 120)
    assert image_pipeline.keep_aspect_size(100, 300, 60, 30, 0, True) == (30, 90)


def test_crop_mirror_normalize_matches_numpy(dataset):
    path, encoded = dataset
    mean, std = [123.68, 116.779, 103.939], [58.393, 57.12, 57.375]

    def body():
        records = _reader(path)
        images = flow.data.OFRecordImageDecoder(records, "encoded", color_space="RGB")
        mirror = flow.random.CoinFlip(batch_size=len(SIZES), seed=3)
        out = flow.image.CropMirrorNormalize(images, mirror_blob=mirror, color_space="RGB",
                                             crop_h=14, crop_w=12, crop_pos_y=0.25,
                                             crop_pos_x=0.75, mean=mean, std=std)
        nhwc = flow.image.CropMirrorNormalize(images, color_space="RGB", output_layout="NHWC",
                                              crop_h=14, crop_w=12, mean=mean, std=std)
        label = flow.data.OFRecordRawDecoder(records, "class/label", shape=(), dtype=flow.int32)
        return out, nhwc, mirror, label

    out, nhwc, mirror, label = _run(body, outputs=4)()
    assert out.shape == (len(SIZES), 3, 14, 12) and out.dtype == np.float32
    assert set(np.unique(mirror)) <= {0, 1}
    np.testing.assert_array_equal(label, np.arange(len(SIZES)))
    for index, (h, w) in enumerate(SIZES):
        image = _pil_decode(encoded[index][0]).astype(np.float32)
        y, x = int((h - 14) * 0.25), int((w - 12) * 0.75)
        patch = image[y:y + 14, x:x + 12]
        if mirror[index]:
            patch = patch[:, ::-1]
        expected = ((patch - mean) / std).transpose(2, 0, 1)
        np.testing.assert_allclose(out[index], expected, rtol=1e-5, atol=1e-5)
        y, x = (h - 14) // 2, (w - 12) // 2
        expected = (image[y:y + 14, x:x + 12] - mean) / std
        np.testing.assert_allclose(nhwc[index], expected, rtol=1e-5, atol=1e-5)


def test_coin_flip_probability_and_seed():
    def body():
        return flow.random.CoinFlip(batch_size=4000, seed=7, probability=0.3)

    first = _run(body)()
    second = _run(body)()
    np.testing.assert_array_equal(first, second)
    assert first.dtype == np.int8 and abs(first.mean() - 0.3) < 0.03


def test_random_crop_windows_are_windows_of_the_image(dataset):
    """Each crop is a window of the decoded image. The decoder decodes only the window, and
    libjpeg's chroma upsampling at its edges may then differ by a few levels."""
    path, encoded = dataset

    def body():
        images = flow.data.OFRecordImageDecoderRandomCrop(_reader(path), "encoded",
                                                          color_space="RGB", seed=5,
                                                          random_area=[0.3, 0.6])
        return _batch_align(images)

    job = _run(body)
    for _ in range(2):
        out = job()
        for index, (h, w) in enumerate(SIZES):
            image = _pil_decode(encoded[index][0]).astype(int)
            rows = int(np.flatnonzero(out[index].any(axis=(1, 2))).max()) + 1
            cols = int(np.flatnonzero(out[index].any(axis=(0, 2))).max()) + 1
            crop = out[index, :rows, :cols].astype(int)
            if (rows, cols) != (h, w):  # not the fallback: about the drawn share of the area
                assert 0.2 <= rows * cols / (h * w) <= 0.7
            best = min((np.abs(image[y:y + rows, x:x + cols] - crop).mean(), y, x)
                       for y in range(h - rows + 1) for x in range(w - cols + 1))
            _, y, x = best
            difference = np.abs(image[y:y + rows, x:x + cols] - crop)
            assert difference.mean() < 0.5 and difference.max() <= 8, (index, best)


def test_random_crop_window_rule():
    """Windows fit, cover the drawn fraction of the area with the drawn aspect ratio (up to
    rounding) or are the fallback, and repeat for a seed."""
    rng = np.random.default_rng(0)
    sizes = [tuple(int(d) for d in rng.integers(50, 300, size=2)) for _ in range(500)]
    seeds = [int(s) for s in rng.integers(0, 2 ** 62, size=500)]
    area, ratio = (0.3, 0.6), (0.5, 2.0)
    windows = image_pipeline.random_crop_windows(sizes, area, ratio, 10, seeds)
    assert windows == image_pipeline.random_crop_windows(sizes, area, ratio, 10, seeds)
    drawn = 0
    for (height, width), (y, x, h, w) in zip(sizes, windows):
        assert 0 <= y and y + h <= height and 0 <= x and x + w <= width and h > 0 and w > 0
        share, aspect = h * w / (height * width), w / h
        if area[0] - 0.05 <= share <= area[1] + 0.05 and ratio[0] * 0.9 <= aspect <= ratio[1] / 0.9:
            drawn += 1
        else:  # the fallback: the centered whole image, its aspect ratio clamped
            assert (y, x) == ((height - h) // 2, (width - w) // 2) and (h == height or w == width)
    assert drawn > 450
    assert image_pipeline.random_crop_windows([(100, 1)], (0.5, 1.0), (0.75, 4 / 3), 3, [1]) == \
        [(49, 0, 1, 1)]


def test_flip(dataset):
    path, encoded = dataset

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB")
        return (_batch_align(flow.image.flip(images, 1)),
                _batch_align(flow.image.flip(images, 0x10)))

    left_right, upside_down = _run(body, outputs=2)()
    for index, (h, w) in enumerate(SIZES):
        image = _pil_decode(encoded[index][0])
        np.testing.assert_array_equal(left_right[index, :h, :w], image[:, ::-1])
        np.testing.assert_array_equal(upside_down[index, :h, :w], image[::-1])


def test_two_devices_split_the_batch_like_one(dataset):
    path, _ = dataset

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="BGR")
        fixed, _, _ = flow.image.Resize(images, target_size=(16, 16))
        normal = flow.image.CropMirrorNormalize(fixed, color_space="BGR", mean=[10.0],
                                                std=[50.0])
        return flow.math.reduce_mean(normal, axis=[1, 2, 3])

    one = _run(body, devices=1)()
    two = _run(body, devices=2)()
    np.testing.assert_allclose(two, one, rtol=1e-6)


def test_training_reads_images(dataset):
    """A linear classifier trained on the normalized images: the loss falls."""
    path, _ = dataset
    flow.clear_default_session()

    @flow.global_function(type="train")
    def train() -> tp.Numpy:
        records = _reader(path)
        images = flow.data.OFRecordImageDecoder(records, "encoded", color_space="RGB")
        fixed, _, _ = flow.image.Resize(images, target_size=(8, 8))
        x = flow.image.CropMirrorNormalize(fixed, color_space="RGB", mean=[128.0], std=[64.0])
        labels = flow.data.OFRecordRawDecoder(records, "class/label", shape=(), dtype=flow.int32)
        logits = flow.layers.dense(flow.reshape(x, (len(SIZES), -1)), len(SIZES))
        loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        flow.optimizer.Adam(flow.optimizer.PiecewiseConstantScheduler([], [0.05])).minimize(loss)
        return loss

    losses = [float(train().mean()) for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0]


def test_bad_input(tmp_path, dataset):
    path, _ = dataset
    not_jpeg = record_pb2.OFRecord(feature={
        "encoded": record_pb2.Feature(bytes_list=record_pb2.BytesList(value=[b"\x89PNG...."])),
    })
    write_part(str(tmp_path / "part-0"), [not_jpeg])
    job = _run(lambda: _batch_align(flow.data.OFRecordImageDecoder(
        flow.data.ofrecord_reader(str(tmp_path), batch_size=1), "encoded")))
    with pytest.raises(ValueError, match="image 0 is not a JPEG image"):
        job()
    job = _run(lambda: _batch_align(flow.data.OFRecordImageDecoder(_reader(path), "missing")))
    with pytest.raises(ValueError, match="no feature 'missing'"):
        job()
    with pytest.raises(ValueError, match="does not fit image"):
        _run(lambda: flow.image.CropMirrorNormalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded"), crop_h=35, crop_w=10))()
    with pytest.raises(ValueError, match="color_space"):
        _run(lambda: _batch_align(flow.data.OFRecordImageDecoder(_reader(path), "encoded",
                                                                 color_space="HSV")))()
    with pytest.raises(ValueError, match="need crop_h and crop_w"):
        _run(lambda: flow.image.CropMirrorNormalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded")))()
    with pytest.raises(ValueError, match="mean has 2 values"):
        _run(lambda: flow.image.CropMirrorNormalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded"), crop_h=8, crop_w=8, mean=[1.0, 2.0]))()
    with pytest.raises(TypeError, match="image list"):
        _run(lambda: flow.math.relu(flow.data.OFRecordImageDecoder(_reader(path), "encoded")))()
    with pytest.raises(ValueError, match="target_size must be"):
        _run(lambda: flow.image.Resize(flow.data.OFRecordImageDecoder(_reader(path), "encoded"),
                                       target_size=16)[0])()
    with pytest.raises(ValueError, match="interpolation_type"):
        _run(lambda: flow.image.Resize(flow.data.OFRecordImageDecoder(_reader(path), "encoded"),
                                       target_size=(8, 8), interpolation_type="lanczos")[0])()


def test_fused_decoder_random_crop_resize(dataset):
    """data.ImageDecoderRandomCropResize: decode (RGB), random crop and resize in one call, the
    same as the decoder with random crop then Resize for one seed; a square image with the
    whole area asked keeps all of it (no other window rounds to that area)."""
    path, encoded = dataset
    crop = dict(seed=3, random_area=[1.0, 1.0], random_aspect_ratio=[0.1, 10.0])

    def body():
        records = _reader(path)
        fused = flow.data.ImageDecoderRandomCropResize(
            flow.data.OFRecordBytesDecoder(records, "encoded"), target_width=48,
            target_height=44, **crop)
        images = flow.data.OFRecordImageDecoderRandomCrop(records, "encoded", color_space="RGB",
                                                          **crop)
        return fused, flow.image.Resize(images, target_size=(48, 44))[0]

    fused, composed = _run(body, outputs=2)()
    assert fused.shape == (len(SIZES), 44, 48, 3) and fused.dtype == np.uint8
    np.testing.assert_array_equal(fused, composed)
    square = SIZES.index((16, 16))  # grows: "auto" is bilinear
    expected = _torch_resize(_pil_decode(encoded[square][0]), 44, 48, "bilinear")
    assert np.abs(fused[square] - expected).max() <= 1


def test_normalize(dataset):
    """image.normalize: float32 (pixel - mean) / std per channel; ops that need uint8 pixels
    refuse its result at trace time."""
    path, encoded = dataset
    mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB")
        normal = flow.image.normalize(images, std=std, mean=mean)
        return flow.image.batch_align(normal, shape=(40, 40, 3), dtype=flow.float32,
                                      alignment=1)

    out = _run(body)()
    for index, (h, w) in enumerate(SIZES):
        expected = (_pil_decode(encoded[index][0]).astype(np.float32) - mean) / std
        np.testing.assert_allclose(out[index, :h, :w], expected, rtol=1e-6)
    with pytest.raises(TypeError, match="float32 images; this op reads uint8"):
        _run(lambda: flow.image.Resize(flow.image.normalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded"), std=[1.0], mean=[0.0]), target_size=(8, 8))[0])()


def test_image_classification_reader(dataset):
    """flow.data.ofrecord_image_classification_reader: decoded images (as OFRecordImageDecoder)
    and the int32 labels, here resized and normalized as OneFlow's AlexNet test model does."""
    path, encoded = dataset
    mean = [123.68, 116.78, 103.94]

    def body():
        images, labels = flow.data.ofrecord_image_classification_reader(
            path, image_feature_name="encoded", label_feature_name="class/label",
            batch_size=len(SIZES), color_space="RGB", name="decode")
        assert labels.shape == (len(SIZES),) and labels.dtype == flow.int32
        resized = flow.image.resize(images, resize_x=48, resize_y=44, color_space="RGB")
        normal = flow.image.crop_mirror_normalize(resized, color_space="RGB",
                                                  output_layout="NCHW", mean=mean,
                                                  output_dtype=flow.float)
        return normal, labels

    normal, labels = _run(body, outputs=2)()
    np.testing.assert_array_equal(labels, np.arange(len(SIZES)))
    for index in range(len(SIZES)):
        # every image grows, so "auto" is bilinear
        expected = _torch_resize(_pil_decode(encoded[index][0]), 44, 48, "bilinear") - mean
        got = normal[index].transpose(1, 2, 0)
        assert np.abs(got - expected).max() <= 1.0 + 1e-4, index


def test_decode_ofrecord_with_image_codec(dataset):
    """OneFlow's older reader: BlobConf with an ImageCodec (bgr2rgb, mirror, resize) and a
    NormByChannelPreprocessor, next to a raw label. Without ImageResizePreprocessor an image is
    resized to (width, height) = (shape[0], shape[1]), as OneFlow does."""
    path, encoded = dataset
    mean, std = [120.0, 110.0, 100.0], [60.0, 50.0, 40.0]

    def body():
        image_conf = flow.data.BlobConf(
            "encoded", shape=(24, 24, 3), dtype=flow.float,
            codec=flow.data.ImageCodec([flow.data.ImagePreprocessor("bgr2rgb"),
                                        flow.data.ImagePreprocessor("mirror"),
                                        flow.data.ImageResizePreprocessor(48, 44)]),
            preprocessors=[flow.data.NormByChannelPreprocessor(mean, std)])
        bgr_conf = flow.data.BlobConf("encoded", shape=(42, 41, 3), dtype=flow.float,
                                      codec=flow.data.ImageCodec())
        label_conf = flow.data.BlobConf("class/label", shape=(), dtype=flow.int32,
                                        codec=flow.data.RawCodec())
        image, bgr, label = flow.data.decode_ofrecord(path, [image_conf, bgr_conf, label_conf],
                                                      batch_size=len(SIZES))
        assert image.shape == (len(SIZES), 44, 48, 3) and bgr.shape == (len(SIZES), 41, 42, 3)
        return image, bgr, label

    job = _run(body, outputs=3)
    mirrored = 0
    for _ in range(3):  # each call draws new flips: 18 in all, so some of each
        image, bgr, label = job()
        mirrored += _check_decoded(image, bgr, label, encoded, mean, std)
    assert 0 < mirrored < 3 * len(SIZES)


def _check_decoded(image, bgr, label, encoded, mean, std):
    """Checks one batch of test_decode_ofrecord_with_image_codec; the number mirrored."""
    np.testing.assert_array_equal(label, np.arange(len(SIZES)))
    assert bgr.dtype == np.uint8  # no preprocessor: the resized pixels
    mirrored = 0
    for index in range(len(SIZES)):
        rgb = _pil_decode(encoded[index][0])
        expected = (_torch_resize(rgb, 44, 48, "bilinear") - mean) / std  # all images grow
        flipped = expected[:, ::-1]
        tolerance = 1.0 / min(std) + 1e-4
        if np.abs(image[index] - expected).max() > tolerance:
            assert np.abs(image[index] - flipped).max() <= tolerance, index
            mirrored += 1
        assert np.abs(bgr[index][..., ::-1].astype(float)
                      - _torch_resize(rgb, 41, 42, "bilinear")).max() <= 1, index
    return mirrored


def test_legacy_codec_errors():
    with pytest.raises(ValueError, match='ImagePreprocessor: preprocessor must be "bgr2rgb" or '
                                         '"mirror", got \'flip\''):
        flow.data.ImagePreprocessor("flip")
    with pytest.raises(ValueError, match="ImageResizePreprocessor: width must be a positive int"):
        flow.data.ImageResizePreprocessor(0, 10)
    with pytest.raises(TypeError, match="BlobConf\\('x'\\): codec must be a RawCodec or an "
                                        "ImageCodec"):
        flow.data.BlobConf("x", (1,), flow.float, codec="jpeg")


@pytest.mark.parametrize("target_size, min_size, max_size, words", [
    (7, 10, 5, "min_size 10 must be 0 (no bound) or <= target_size 7"),
    (20, 10, 5, "max_size 5 must be 0 (no bound) or >= target_size 20"),
    (20, 0, 19, "max_size 19 must be 0 (no bound) or >= target_size 20"),
    (20, 21, 0, "min_size 21 must be 0 (no bound) or <= target_size 20"),
    (20, -1, 0, "min_size must be an int >= 0, got -1"),
    (20, "5", 0, "min_size must be an int >= 0, got '5'"),
])
def test_resize_keep_aspect_ratio_bounds(dataset, target_size, min_size, max_size, words):
    """OneFlow 0.3's image_resize_keep_aspect_ratio refused max_size < target_size and (in its
    kernel) target_size < min_size; 0 means no bound, so min_size > max_size is refused too."""
    path, _ = dataset
    for side in ("shorter", "longer"):
        with pytest.raises(ValueError) as info:
            _run(lambda: flow.image.Resize(
                flow.data.OFRecordImageDecoder(_reader(path), "encoded"), target_size=target_size,
                min_size=min_size, max_size=max_size, keep_aspect_ratio=True,
                resize_side=side)[1])()
        assert "image.Resize: " + words in str(info.value)


def test_resize_keep_aspect_ratio_bounds_equal_to_target_size(dataset):
    """min_size == target_size == max_size is allowed: max_size then bounds the longer side, so
    every image's longer side becomes 16."""
    path, _ = dataset

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded")
        return flow.image.Resize(images, target_size=16, min_size=16, max_size=16,
                                 keep_aspect_ratio=True)[2]

    new_size = _run(body)()
    for index, (h, w) in enumerate(SIZES):
        factor = 16 / max(h, w)
        np.testing.assert_array_equal(new_size[index], [round(w * factor), round(h * factor)])


@pytest.mark.parametrize("mean, std, words", [
    ([float("nan"), 0.0, 0.0], [1.0], "mean must be finite (in float32), got [nan, 0.0, 0.0]"),
    ([float("inf")], [1.0], "mean must be finite (in float32), got [inf]"),
    ([1e39], [1.0], "mean must be finite (in float32), got [1e+39]"),
    ([0.0], [1.0, float("nan"), 1.0], "std must be finite (in float32), got [1.0, nan, 1.0]"),
    ([0.0], [float("-inf")], "std must be finite (in float32), got [-inf]"),
    ([0.0], [1.0, 0.0, 1.0], "std must not be 0 (nor so small that 1 / std overflows float32), "
                             "got [1.0, 0.0, 1.0]"),
    ([0.0], [1e-40], "std must not be 0 (nor so small that 1 / std overflows float32), "
                     "got [1e-40]"),
])
def test_crop_mirror_normalize_refuses_non_finite_mean_and_std(dataset, mean, std, words):
    path, _ = dataset
    with pytest.raises(ValueError) as info:
        _run(lambda: flow.image.CropMirrorNormalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded"), crop_h=8, crop_w=8, mean=mean, std=std))()
    assert "image.CropMirrorNormalize: " + words in str(info.value)
    with pytest.raises(ValueError) as info:
        _run(lambda: flow.image.batch_align(flow.image.normalize(flow.data.OFRecordImageDecoder(
            _reader(path), "encoded"), std=std, mean=mean), shape=(40, 40, 3),
            dtype=flow.float32, alignment=1))()
    assert "image.normalize: " + words in str(info.value)


def test_crop_mirror_normalize_with_negative_and_tiny_std(dataset):
    """A negative std, or one as small as 1e-30, is a valid (if odd) normalization: checked
    against numpy."""
    path, encoded = dataset
    mean, std = [100.0, -5.0, 0.5], [-2.0, 1e-30, 3.0]

    def body():
        images = flow.data.OFRecordImageDecoder(_reader(path), "encoded", color_space="RGB")
        return flow.image.CropMirrorNormalize(images, color_space="RGB", output_layout="NHWC",
                                              crop_h=10, crop_w=10, mean=mean, std=std)

    out = _run(body)()
    for index, (h, w) in enumerate(SIZES):
        image = _pil_decode(encoded[index][0]).astype(np.float64)
        y, x = (h - 10) // 2, (w - 10) // 2
        expected = (image[y:y + 10, x:x + 10] - mean) / std
        np.testing.assert_allclose(out[index], expected, rtol=1e-5)
