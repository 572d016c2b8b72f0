#!/usr/bin/python3
"""A FUSE file system in memory that loses, at a simulated power cut, everything not yet fsynced.

Usage: powercut-fs.py <mountpoint>   (Debian: python3-fusepy, fuse3; root or /dev/fuse access)

Durability follows POSIX strictly, as a disk with a volatile write cache does:
  * a file's bytes and size become durable with fsync/fdatasync of that file (or every write, when the
    file was opened O_SYNC/O_DSYNC);
  * a directory's entries (create, mkdir, unlink, rmdir, rename) become durable with fsync of that
    directory; fsync of a file does not make its name durable.
Commands on stdin, one per line, each answered on stdout:
  cut   -> every file and directory goes back to its last durable state   ("cut ok")
  stats -> counters of syncs seen                                          ("stats ...")
  hold  -> every later fsync/fsyncdir blocks (before it takes effect) until release; the first
           one blocked is reported ("hold ok", then "held <path>")
  release -> the held syncs proceed                                        ("release ok")
  eio   -> the next fsync of a file fails once with EIO, as Linux reports a writeback error: its
           changed pages are marked clean without becoming durable, so a later fsync of the file
           succeeds and still does not make them durable unless they are written again ("eio ok",
           then "eio <path>" when it happens)
  quit  (or end of stdin) -> unmount and exit
"ready" is printed once the file system is mounted.
"""

import errno
import os
import stat
import subprocess
import sys
import threading
import time

from fusepy import FUSE, FuseOSError, Operations

PAGE = 4096


class Node:
    def __init__(self, mode):
        self.mode = mode
        now = time.time()
        self.atime = self.mtime = self.ctime = now
        if stat.S_ISDIR(mode):
            self.entries = {}
            self.durable_entries = {}
        else:
            self.data = bytearray()
            self.durable_size = 0
            # Copy-on-write undo log: page index -> its durable bytes, for pages changed since the last sync.
            self.undo = {}
            # Pages a failed fsync marked clean: their durable bytes, restored at a cut however many
            # fsyncs succeed later, until the page is written again.
            self.lost = {}

    @property
    def is_dir(self):
        return stat.S_ISDIR(self.mode)

    def save_pages(self, start, end):
        first = start // PAGE
        last = max(first, (end - 1) // PAGE) if end > start else first
        for page in range(first, last + 1):
            if page in self.lost:
                self.undo[page] = self.lost.pop(page)
            elif page not in self.undo:
                self.undo[page] = bytes(self.data[page * PAGE:(page + 1) * PAGE])

    def write(self, offset, buf):
        self.save_pages(offset, offset + len(buf))
        if offset > len(self.data):
            self.save_pages(len(self.data), offset)
            self.data.extend(b"\0" * (offset - len(self.data)))
        self.data[offset:offset + len(buf)] = buf

    def truncate(self, length):
        if length < len(self.data):
            self.save_pages(length, len(self.data))
            del self.data[length:]
        elif length > len(self.data):
            self.save_pages(len(self.data), length)
            self.data.extend(b"\0" * (length - len(self.data)))

    def sync(self):
        self.undo.clear()
        self.durable_size = len(self.data)

    def fail_sync(self):
        for page, content in self.undo.items():
            self.lost.setdefault(page, content)
        self.undo.clear()

    def cut(self):
        for pages in (self.undo, self.lost):
            for page, content in pages.items():
                start = page * PAGE
                if len(self.data) < start + len(content):
                    self.data.extend(b"\0" * (start + len(content) - len(self.data)))
                self.data[start:start + len(content)] = content
            pages.clear()
        if len(self.data) > self.durable_size:
            del self.data[self.durable_size:]
        else:
            self.data.extend(b"\0" * (self.durable_size - len(self.data)))


class PowerCutFs(Operations):
    def __init__(self):
        self.mutex = threading.Lock()
        self.root = Node(stat.S_IFDIR | 0o755)
        self.handles = {}
        self.next_fh = 1
        self.file_syncs = 0
        self.dir_syncs = 0
        self.cuts = 0
        # Set while syncs may proceed; cleared by "hold". Waited on outside the mutex, so reads and
        # writes continue while a sync is held (as on a device whose flush is slow).
        self.released = threading.Event()
        self.released.set()
        self.reported_hold = False
        self.fail_next_sync = False
        self.print_lock = threading.Lock()

    def say(self, text):
        with self.print_lock:
            print(text, flush=True)

    def wait_if_held(self, path):
        if self.released.is_set():
            return
        with self.print_lock:
            first = not self.reported_hold
            self.reported_hold = True
        if first:
            self.say(f"held {path}")
        self.released.wait()

    # --- helpers -----------------------------------------------------------------------------------
    def _lookup(self, path):
        node = self.root
        for part in path.strip("/").split("/"):
            if not part:
                continue
            if not node.is_dir or part not in node.entries:
                raise FuseOSError(errno.ENOENT)
            node = node.entries[part]
        return node

    def _parent(self, path):
        head, name = os.path.split(path.rstrip("/"))
        parent = self._lookup(head or "/")
        if not parent.is_dir:
            raise FuseOSError(errno.ENOTDIR)
        return parent, name

    def _handle(self, node, flags):
        fh = self.next_fh
        self.next_fh += 1
        self.handles[fh] = (node, bool(flags & (os.O_SYNC | os.O_DSYNC)))
        return fh

    def _node(self, path, fh):
        if fh is not None and fh in self.handles:
            return self.handles[fh][0]
        return self._lookup(path)

    # --- control -----------------------------------------------------------------------------------
    def cut(self):
        with self.mutex:
            seen = set()

            def restore(node):
                if id(node) in seen:
                    return
                seen.add(id(node))
                if node.is_dir:
                    node.entries = dict(node.durable_entries)
                    for child in node.entries.values():
                        restore(child)
                else:
                    node.cut()

            restore(self.root)
            self.handles.clear()
            self.cuts += 1

    # --- file system -------------------------------------------------------------------------------
    def init(self, path):
        print("ready", flush=True)

    def getattr(self, path, fh=None):
        with self.mutex:
            node = self._node(path, fh)
            size = 4096 if node.is_dir else len(node.data)
            return {
                "st_mode": node.mode, "st_nlink": 2 if node.is_dir else 1, "st_size": size,
                "st_uid": os.getuid(), "st_gid": os.getgid(), "st_blocks": (size + 511) // 512,
                "st_atime": node.atime, "st_mtime": node.mtime, "st_ctime": node.ctime,
            }

    def access(self, path, amode):
        with self.mutex:
            self._lookup(path)
        return 0

    def statfs(self, path):
        blocks = 1 << 28
        return {"f_bsize": 4096, "f_frsize": 4096, "f_blocks": blocks, "f_bfree": blocks, "f_bavail": blocks,
                "f_files": 1 << 20, "f_ffree": 1 << 20, "f_favail": 1 << 20, "f_namemax": 255}

    def readdir(self, path, fh):
        with self.mutex:
            node = self._lookup(path)
            if not node.is_dir:
                raise FuseOSError(errno.ENOTDIR)
            return [".", ".."] + list(node.entries)

    def opendir(self, path):
        with self.mutex:
            if not self._lookup(path).is_dir:
                raise FuseOSError(errno.ENOTDIR)
        return 0

    def fsyncdir(self, path, datasync, fh):
        self.wait_if_held(path)
        with self.mutex:
            node = self._lookup(path)
            node.durable_entries = dict(node.entries)
            self.dir_syncs += 1
        return 0

    def mkdir(self, path, mode):
        with self.mutex:
            parent, name = self._parent(path)
            if name in parent.entries:
                raise FuseOSError(errno.EEXIST)
            parent.entries[name] = Node(stat.S_IFDIR | (mode & 0o7777))
            parent.mtime = time.time()
        return 0

    def rmdir(self, path):
        with self.mutex:
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                raise FuseOSError(errno.ENOENT)
            if not node.is_dir:
                raise FuseOSError(errno.ENOTDIR)
            if node.entries:
                raise FuseOSError(errno.ENOTEMPTY)
            del parent.entries[name]
        return 0

    def create(self, path, mode, fi=None):
        with self.mutex:
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                node = Node(stat.S_IFREG | (mode & 0o7777))
                parent.entries[name] = node
            return self._handle(node, os.O_WRONLY)

    def open(self, path, flags):
        with self.mutex:
            node = self._lookup(path)
            if node.is_dir:
                raise FuseOSError(errno.EISDIR)
            if flags & os.O_TRUNC:
                node.truncate(0)
            return self._handle(node, flags)

    def read(self, path, size, offset, fh):
        with self.mutex:
            node = self._node(path, fh)
            return bytes(node.data[offset:offset + size])

    def write(self, path, data, offset, fh):
        with self.mutex:
            node = self._node(path, fh)
            node.write(offset, data)
            node.mtime = time.time()
            if fh in self.handles and self.handles[fh][1]:
                node.sync()
            return len(data)

    def truncate(self, path, length, fh=None):
        with self.mutex:
            node = self._node(path, fh)
            node.truncate(length)
        return 0

    def fsync(self, path, datasync, fh):
        self.wait_if_held(path)
        with self.mutex:
            if self.fail_next_sync:
                self.fail_next_sync = False
                self._node(path, fh).fail_sync()
                self.say(f"eio {path}")
                raise FuseOSError(errno.EIO)
            self._node(path, fh).sync()
            self.file_syncs += 1
        return 0

    def flush(self, path, fh):
        return 0

    def release(self, path, fh):
        with self.mutex:
            self.handles.pop(fh, None)
        return 0

    def unlink(self, path):
        with self.mutex:
            parent, name = self._parent(path)
            node = parent.entries.get(name)
            if node is None:
                raise FuseOSError(errno.ENOENT)
            if node.is_dir:
                raise FuseOSError(errno.EISDIR)
            del parent.entries[name]
        return 0

    def rename(self, old, new):
        with self.mutex:
            old_parent, old_name = self._parent(old)
            new_parent, new_name = self._parent(new)
            node = old_parent.entries.get(old_name)
            if node is None:
                raise FuseOSError(errno.ENOENT)
            target = new_parent.entries.get(new_name)
            if target is not None and target.is_dir:
                if not node.is_dir:
                    raise FuseOSError(errno.EISDIR)
                if target.entries:
                    raise FuseOSError(errno.ENOTEMPTY)
            del old_parent.entries[old_name]
            new_parent.entries[new_name] = node
        return 0

    def chmod(self, path, mode):
        with self.mutex:
            node = self._lookup(path)
            node.mode = (node.mode & ~0o7777) | (mode & 0o7777)
        return 0

    def chown(self, path, uid, gid):
        return 0

    def utimens(self, path, times=None):
        with self.mutex:
            node = self._lookup(path)
            node.atime, node.mtime = times if times else (time.time(), time.time())
        return 0


def control(fs, mountpoint):
    for line in sys.stdin:
        command = line.strip()
        if command == "cut":
            fs.cut()
            fs.say("cut ok")
        elif command == "stats":
            fs.say(f"stats file_syncs={fs.file_syncs} dir_syncs={fs.dir_syncs} cuts={fs.cuts}")
        elif command == "hold":
            fs.reported_hold = False
            fs.released.clear()
            fs.say("hold ok")
        elif command == "release":
            fs.released.set()
            fs.say("release ok")
        elif command == "eio":
            with fs.mutex:
                fs.fail_next_sync = True
            fs.say("eio ok")
        elif command == "quit":
            break
    fs.released.set()
    subprocess.run(["fusermount", "-u", "-z", mountpoint], check=False)


def main():
    mountpoint = sys.argv[1]
    fs = PowerCutFs()
    threading.Thread(target=control, args=(fs, mountpoint), daemon=True).start()
    # No kernel caching of data, attributes or names: after a cut the kernel must ask us again.
    FUSE(fs, mountpoint, foreground=True, nothreads=False, direct_io=True, attr_timeout=0,
         entry_timeout=0, negative_timeout=0, big_writes=True, max_write=131072)


if __name__ == "__main__":
    main()
