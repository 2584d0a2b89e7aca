"""oneflow.checkpoint: saving and loading the session's variables, in OneFlow 0.3's layout.

    flow.checkpoint.save("./model")                       # every variable of the session
    flow.load_variables(flow.checkpoint.get("./model"))   # in a later session or process

A checkpoint is a folder with one sub-folder per variable, named after it, holding `out` (the
logical value's raw bytes in C order) and `meta` (a text-format VariableMetaInfo: shape dims and
data type), plus an empty `snapshot_done` file written last. A save goes to a temporary folder
beside the target and is renamed into place, so a crash never leaves a half-written checkpoint
at the target. Optimizer state (momentum, Adam's m and v, the train step) is made of variables
and is saved and loaded with the model. See docs/checkpoints.md.

These functions work whenever the user calls them: before the first job call they trace the
global functions and start the session (so the variables exist), and they first wait for calls
in flight, so values are those after every call made so far. flow.load_variables and
flow.get_all_variables live here too and are exported at the top level.
"""
import contextlib
import ctypes
import errno
import os
import re
import shutil
import tempfile

import numpy as np

from oneflow.framework import dtypes
from oneflow.framework import session as session_util

META_FILE = "meta"
DATA_FILE = "out"
DONE_FILE = "snapshot_done"

# OneFlow's DataType names (oneflow/core/common/data_type.proto) as written in `meta`, and the
# enum numbers its text format may use instead. kChar is OneFlow's int8-sized char. OneFlow 0.3
# saved float16 variables as kFloat16 (IEEE half, native byte order), so those are kept too.
_META_NAMES = {
    dtypes.float32: "kFloat", dtypes.float64: "kDouble", dtypes.int8: "kInt8",
    dtypes.int32: "kInt32", dtypes.int64: "kInt64", dtypes.uint8: "kUInt8",
    dtypes.float16: "kFloat16",
}
_DTYPE_OF_META_NAME = dict({name: dtype for dtype, name in _META_NAMES.items()}, kChar=dtypes.int8)
_META_NAME_OF_NUMBER = {
    1: "kChar", 2: "kFloat", 3: "kDouble", 4: "kInt8", 5: "kInt32", 6: "kInt64", 7: "kUInt8",
    8: "kOFRecord", 9: "kFloat16", 10: "kTensorBuffer", 11: "kBFloat16", 12: "kBool",
}


# ---- the `meta` file -------------------------------------------------------------------------

def meta_text(shape, dtype):
    """VariableMetaInfo{shape, data_type} in protobuf text format, as OneFlow writes it."""
    lines = ["shape {"] + ["  dim: %d" % dim for dim in shape] + ["}"]
    lines.append("data_type: %s" % _META_NAMES[dtype])
    return "\n".join(lines) + "\n"


# One token of protobuf text format (after whitespace and # comments): a name, an integer, a
# quoted string or a punctuation mark.
_TOKEN = re.compile(r'\s*(?:#[^\n]*\n\s*)*'
                    r'([A-Za-z_][A-Za-z0-9_.]*|-?\d+|"(?:[^"\\]|\\.)*"|[{}<>:;,\[\]])')


# The deepest nesting of messages read from `meta` (protobuf's own parsers stop at 100 too); a
# VariableMetaInfo nests one level.
_MAX_NESTING = 100


def _parse_text_message(text):
    """A protobuf text-format message as {field: [values]}; nested messages become dicts. Enough
    of the format for `meta` (unknown fields, such as later versions' `stride`, are kept and
    ignored by the caller). Messages nested more than _MAX_NESTING deep are refused."""
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError("unexpected text %r" % text[position:position + 20])
        tokens.append(match.group(1))
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1

    def parse(index, closing, depth):
        if depth > _MAX_NESTING:
            raise ValueError("messages are nested more than %d levels deep" % _MAX_NESTING)
        message = {}
        while index < len(tokens) and tokens[index] != closing:
            name = tokens[index]
            if not re.match(r"[A-Za-z_]", name):
                raise ValueError("expected a field name, got %r" % name)
            index += 1
            if index < len(tokens) and tokens[index] == ":":
                index += 1
            if index >= len(tokens):
                raise ValueError("field %r has no value" % name)
            if tokens[index] in ("{", "<"):
                value, index = parse(index + 1, "}" if tokens[index] == "{" else ">", depth + 1)
                index += 1
            else:
                value = tokens[index]
                index += 1
            message.setdefault(name, []).append(value)
            if index < len(tokens) and tokens[index] in (";", ","):
                index += 1
        if closing is not None and index >= len(tokens):
            raise ValueError("missing %r" % closing)
        return message, index

    message, index = parse(0, None, 0)
    return message


def read_meta(meta_path, what):
    """(shape, dtype) from a `meta` file; ValueError naming `what` and the file otherwise."""
    try:
        with open(meta_path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError("%s: cannot read checkpoint file %r: %s" % (what, meta_path, error))
    try:
        message = _parse_text_message(text)
        shapes = message.get("shape", [])
        if len(shapes) != 1 or not isinstance(shapes[0], dict):
            raise ValueError("expected one 'shape { dim: ... }'")
        shape = tuple(int(dim) for dim in shapes[0].get("dim", []))
        if any(dim < 0 for dim in shape):
            raise ValueError("negative dimension in shape %r" % (shape,))
        if np.prod(shape, dtype=object) >= 2 ** 48:
            raise ValueError("shape %r has more elements than any variable can" % (shape,))
        data_types = message.get("data_type", [])
        if len(data_types) != 1 or isinstance(data_types[0], dict):
            raise ValueError("expected one 'data_type: kFloat' (or another OneFlow DataType)")
        name = data_types[0]
        if re.fullmatch(r"\d+", name):
            name = _META_NAME_OF_NUMBER.get(int(name), name)
        if name not in _DTYPE_OF_META_NAME:
            raise ValueError("data type %s is not supported (supported: %s)"
                             % (name, ", ".join(sorted(_DTYPE_OF_META_NAME))))
    except ValueError as error:
        raise ValueError("%s: checkpoint file %r is not a valid VariableMetaInfo: %s"
                         % (what, meta_path, error))
    return shape, _DTYPE_OF_META_NAME[name]


# ---- values -----------------------------------------------------------------------------------

class FileBackedValue:
    """One variable of a checkpoint on disk (flow.checkpoint.get's values): `.shape`, `.dtype`
    from its `meta`, and `.numpy()`, which reads `out`. A folder without `meta` (older
    snapshots) has shape and dtype None and takes them from the variable it is loaded into."""

    def __init__(self, directory, name):
        self.directory = directory
        self.name = name
        self.file_path = os.path.join(directory, DATA_FILE)
        self.meta_path = os.path.join(directory, META_FILE)
        if not os.path.lexists(self.file_path):
            raise FileNotFoundError("variable %r: checkpoint file %r is missing"
                                    % (name, self.file_path))
        _check_regular_file(self.file_path, "variable %r" % name)
        if os.path.lexists(self.meta_path):
            _check_regular_file(self.meta_path, "variable %r" % name)
            self._shape, self._dtype = read_meta(self.meta_path, "variable %r" % name)
            self.check_file_size(self._shape, self._dtype)
        else:
            self._shape, self._dtype = None, None

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    def __repr__(self):
        return "FileBackedValue(%r, shape=%r, dtype=%r)" % (self.file_path, self._shape,
                                                            self._dtype)

    def check_file_size(self, shape, dtype):
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.numpy_dtype.itemsize
        try:
            size = os.path.getsize(self.file_path)
        except OSError as error:
            raise FileNotFoundError("variable %r: cannot read checkpoint file %r: %s"
                                    % (self.name, self.file_path, error))
        if size != expected:
            raise ValueError(
                "variable %r: checkpoint file %r has %d bytes, but shape %r of %s needs %d "
                "(the file is truncated or belongs to another variable)"
                % (self.name, self.file_path, size, shape, dtype.name, expected))

    def read(self, shape, dtype):
        """The value as an array of `shape` and `dtype`, with the file's size checked."""
        self.check_file_size(shape, dtype)
        try:
            data = np.fromfile(self.file_path, dtype=dtype.numpy_dtype)
        except OSError as error:
            raise FileNotFoundError("variable %r: cannot read checkpoint file %r: %s"
                                    % (self.name, self.file_path, error))
        if data.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError("variable %r: checkpoint file %r changed while it was read"
                             % (self.name, self.file_path))
        return data.reshape(shape)

    def numpy(self):
        if self._shape is None:
            raise ValueError(
                "variable %r: checkpoint folder %r has no %r file, so its shape and dtype are "
                "unknown; load it into a variable with flow.load_variables instead"
                % (self.name, self.directory, META_FILE))
        return self.read(self._shape, self._dtype)


def _check_regular_file(file_path, what):
    """ValueError unless `file_path` is a regular file (or a link to one): a folder, a FIFO (whose
    reading would wait for a writer) or a broken link is no checkpoint file."""
    if os.path.isfile(file_path):
        return
    if os.path.isdir(file_path):
        kind = "a directory"
    elif not os.path.exists(file_path):
        kind = "a broken symbolic link"
    else:
        kind = "a special file (FIFO, socket or device)"
    raise ValueError("%s: checkpoint file %r is %s, not a regular file" % (what, file_path, kind))


class VariableValue:
    """A variable of the session (flow.get_all_variables' values): `.shape`, `.dtype`, and
    `.numpy()`, which returns a copy of its current value (after the calls made so far)."""

    def __init__(self, session, name, shape, dtype):
        self._session = session
        self.name = name
        self._shape = tuple(shape)
        self._dtype = dtype

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    def __repr__(self):
        return "VariableValue(%r, shape=%r, dtype=%r)" % (self.name, self._shape, self._dtype)

    def numpy(self):
        session = self._session
        what = "reading variable %r" % self.name
        with _locked(session, what):
            if session.closed:
                raise RuntimeError("variable %r: its session has been closed "
                                   "(flow.clear_default_session())" % self.name)
            cpp = session.ensure_started(what)
            return cpp.variable_value(self.name)


@contextlib.contextmanager
def _locked(session, what):
    """Holds the session's lock. Refused first on a callback's runtime thread: the thread that
    holds the lock may be waiting for this very callback's call to finish."""
    session_util.check_not_in_callback(what)
    with session.lock:
        yield


def _path_argument(path, what):
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("%s: path must be a str or os.PathLike, got %s"
                        % (what, type(path).__name__))
    path = os.fspath(path)
    if not path:
        raise ValueError("%s: path must not be empty" % what)
    return path


def _value_array(name, value):
    """`value` (a numpy array, a FileBackedValue, a VariableValue) as a C-contiguous array."""
    if isinstance(value, FileBackedValue):
        return value.numpy()
    if isinstance(value, VariableValue):
        return value.numpy()
    if isinstance(value, np.ndarray):
        dtypes.check(value.dtype, "variable %r: value's dtype" % name)
        return np.ascontiguousarray(value)
    raise TypeError("variable %r: a value must be a numpy array, a value of "
                    "flow.checkpoint.get() or of flow.get_all_variables(), got %s"
                    % (name, type(value).__name__))


# ---- flow.get_all_variables / flow.load_variables ---------------------------------------------

def get_all_variables():
    """name -> VariableValue for every variable of the session's jobs (tracing and starting the
    session first if no job has been called yet)."""
    session = session_util.default_session()
    with _locked(session, "flow.get_all_variables()"):
        cpp = session.ensure_started("flow.get_all_variables()")
        if cpp is None:
            return {}
        variables = {}
        for name in cpp.variable_names():
            shape, dtype = cpp.variable_desc(name)
            variables[name] = VariableValue(session, name, shape, dtypes.from_value(dtype))
        return variables


def load_variables(value_dict, ignore_mismatch=True):
    """Sets variables from `value_dict` (name -> numpy array, a value of flow.checkpoint.get()
    or of flow.get_all_variables()). Variables not named in it keep their values. A name that
    is no variable of the session is skipped, or with ignore_mismatch=False raises ValueError.

    Every value is read and checked (shape, dtype, file size) before any variable is written, so
    an error leaves all variables as they were."""
    if not hasattr(value_dict, "items"):
        raise TypeError("flow.load_variables: value_dict must be a dict of variable name -> "
                        "value, got %s" % type(value_dict).__name__)
    session = session_util.default_session()
    with _locked(session, "flow.load_variables()"):
        cpp = session.ensure_started("flow.load_variables()")
        names = set(cpp.variable_names()) if cpp is not None else set()
        arrays = {}
        for name, value in value_dict.items():
            if not isinstance(name, str):
                raise TypeError("flow.load_variables: variable names must be str, got %r"
                                % (name,))
            if name not in names:
                if ignore_mismatch:
                    continue
                raise ValueError(
                    "flow.load_variables: %r is not a variable of this session (variables: %s); "
                    "pass ignore_mismatch=True to skip such names"
                    % (name, ", ".join(sorted(names)) or "none"))
            shape, dtype_value = cpp.variable_desc(name)
            shape, dtype = tuple(shape), dtypes.from_value(dtype_value)
            if isinstance(value, FileBackedValue) and value.shape is None:
                array = value.read(shape, dtype)  # no meta: the variable says what the bytes are
                where = " (checkpoint file %r)" % value.file_path
            else:
                where = (" (checkpoint file %r)" % value.file_path
                         if isinstance(value, FileBackedValue) else "")
                value_shape, value_dtype = _describe(name, value)
                if value_dtype != dtype:
                    raise TypeError(
                        "flow.load_variables: variable %r is %s, but its value%s is %s; the "
                        "dtype must match" % (name, dtype.name, where, value_dtype.name))
                if value_shape != shape:
                    raise ValueError(
                        "flow.load_variables: variable %r has shape %r, but its value%s has "
                        "shape %r; the shape must match" % (name, shape, where, value_shape))
                array = _value_array(name, value)
            arrays[name] = array
        if arrays:
            cpp.set_variable_values(arrays)


def _describe(name, value):
    if isinstance(value, (FileBackedValue, VariableValue)):
        return tuple(value.shape), value.dtype
    if isinstance(value, np.ndarray):
        return tuple(value.shape), dtypes.check(value.dtype, "variable %r: value's dtype" % name)
    raise TypeError("flow.load_variables: variable %r: a value must be a numpy array, a value "
                    "of flow.checkpoint.get() or of flow.get_all_variables(), got %s"
                    % (name, type(value).__name__))


# ---- flow.checkpoint.get ----------------------------------------------------------------------

def get(path):
    """The checkpoint at `path` as name -> FileBackedValue (or one FileBackedValue when `path`
    is a single variable's folder). Each variable's `meta` and file size are checked here;
    without `meta` (converted checkpoints) the variable's own shape and dtype are used."""
    path = _path_argument(path, "flow.checkpoint.get")
    if not os.path.exists(path):
        raise FileNotFoundError("flow.checkpoint.get: checkpoint %r does not exist" % path)
    if not os.path.isdir(path):
        raise NotADirectoryError("flow.checkpoint.get: %r is a file; a checkpoint is a folder "
                                 "with one sub-folder per variable" % path)
    # One variable's folder: its `out` is no folder (a folder `out` with its own files is the
    # variable "out" of a checkpoint), or a `meta` file lies beside it.
    data_path = os.path.join(path, DATA_FILE)
    if os.path.lexists(data_path) and (not os.path.isdir(data_path)
                                       or os.path.isfile(os.path.join(path, META_FILE))):
        return FileBackedValue(path, os.path.basename(os.path.normpath(path)))
    values = {}
    any_meta = False
    for entry in sorted(os.listdir(path)):
        directory = os.path.join(path, entry)
        if not os.path.isdir(directory):
            continue
        has_data = os.path.lexists(os.path.join(directory, DATA_FILE))
        has_meta = os.path.lexists(os.path.join(directory, META_FILE))
        any_meta = any_meta or has_meta
        if has_data or has_meta:  # a folder with only `meta` lost its data: FileBackedValue says so
            values[entry] = FileBackedValue(directory, entry)
    converted = values and not any_meta
    if not os.path.exists(os.path.join(path, DONE_FILE)) and not converted:
        # Folders of bare `out` files (no `meta` anywhere: written by converters such as
        # OneFlow-Benchmark's convert_tf_ckpt_to_of.py) load as OneFlow 0.3 loads them; a save
        # of ours always writes `meta`, so one without `snapshot_done` is incomplete.
        if not values:
            raise ValueError(
                "flow.checkpoint.get: %r is not a checkpoint: it has no variable folders "
                "(<name>/%s) and no %r file" % (path, DATA_FILE, DONE_FILE))
        raise ValueError(
            "flow.checkpoint.get: checkpoint %r has no %r file: it was not saved completely "
            "(the save was interrupted or is still running)" % (path, DONE_FILE))
    return values


# ---- flow.checkpoint.save ---------------------------------------------------------------------

def save(path, var_dict=None):
    """Writes every variable of the session (or `var_dict`: name -> value as load_variables
    takes) to the checkpoint folder `path`, replacing a checkpoint already there atomically.
    A folder at `path` that is not a checkpoint (non-empty without `snapshot_done`) is refused."""
    path = _path_argument(path, "flow.checkpoint.save")
    session = session_util.default_session()
    # Held throughout, so no call of another thread changes variables while they are written.
    with _locked(session, "flow.checkpoint.save()"):
        session.ensure_started("flow.checkpoint.save()")
        try:
            _save(path, var_dict)
        except OSError as error:
            if error.errno is None:  # one of ours, already saying what is wrong
                raise
            # e.g. a read-only or full disk, a file where a parent folder should be
            raise type(error)(error.errno, "flow.checkpoint.save: cannot write checkpoint %r: %s"
                              % (path, error.strerror), error.filename) from error


def _save(path, var_dict):
    target = os.path.abspath(path)
    if os.path.exists(target):
        if not os.path.isdir(target):
            raise FileExistsError("flow.checkpoint.save: %r is a file; a checkpoint is a folder"
                                  % path)
        if os.listdir(target) and not os.path.exists(os.path.join(target, DONE_FILE)):
            raise FileExistsError(
                "flow.checkpoint.save: %r is a non-empty folder that is not a checkpoint (no %r "
                "file); refusing to replace it" % (path, DONE_FILE))
    if var_dict is None:
        var_dict = get_all_variables()
    elif not hasattr(var_dict, "items"):
        raise TypeError("flow.checkpoint.save: var_dict must be a dict of name -> value, got %s"
                        % type(var_dict).__name__)
    for name in var_dict:
        if (not isinstance(name, str) or not name or name in (".", "..") or "/" in name
                or os.sep in name or "\0" in name):
            raise ValueError("flow.checkpoint.save: %r cannot name a variable's folder" % (name,))
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    temporary = tempfile.mkdtemp(prefix=".%s.saving-" % os.path.basename(target), dir=parent)
    try:
        for name, value in var_dict.items():
            array = _value_array(name, value)
            _write_variable(os.path.join(temporary, name), array)
        with open(os.path.join(temporary, DONE_FILE), "w"):
            pass
        _fsync_directory(temporary)
        _replace_directory(temporary, target)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    _fsync_directory(parent)


def _write_variable(directory, array):
    os.mkdir(directory)
    dtype = dtypes.check(array.dtype)
    with open(os.path.join(directory, DATA_FILE), "wb") as f:
        f.write(memoryview(np.ascontiguousarray(array)).cast("B"))
        f.flush()
        os.fsync(f.fileno())
    with open(os.path.join(directory, META_FILE), "w") as f:
        f.write(meta_text(array.shape, dtype))
        f.flush()
        os.fsync(f.fileno())
    _fsync_directory(directory)


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first, second):
    """Swaps two paths atomically (Linux renameat2 RENAME_EXCHANGE); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                 _RENAME_EXCHANGE) == 0:
        return True
    error = ctypes.get_errno()
    if error in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(error, os.strerror(error), second)


def _replace_directory(source, target):
    """Moves the finished folder `source` to `target`. An existing `target` is swapped out in
    one step where the system allows it; otherwise it is moved aside, then `source` moved in
    (a crash between the two renames leaves the old checkpoint in the `.replaced-` folder)."""
    if not os.path.exists(target):
        os.rename(source, target)
        return
    if not os.listdir(target):
        os.rmdir(target)
        os.rename(source, target)
        return
    if _exchange(source, target):
        shutil.rmtree(source, ignore_errors=True)  # now holds the old checkpoint
        return
    old = tempfile.mkdtemp(prefix=".%s.replaced-" % os.path.basename(target),
                           dir=os.path.dirname(target))
    os.rmdir(old)
    os.rename(target, old)
    try:
        os.rename(source, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
