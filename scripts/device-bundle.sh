#!/usr/bin/env bash
# Packs what `ttsgen bench` needs on a machine that has no espeak-ng and no Go (the team's GPU machine): the binary,
# the shared libraries it links that such a machine may lack, and the English espeak-ng data.
# usage: scripts/device-bundle.sh [DIR]   (default .benchkit; ignored by git; carry it and run DIR/ttsgen.sh ...)
set -euo pipefail
dir=${1:-.benchkit}
rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/espeak-ng-data"
go build -o "$dir/ttsgen" .
# Every library the binary pulls in, except the C library itself (the target's newer glibc serves).
ldd "$dir/ttsgen" | awk '/=> \//{print $3}' | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*)\.so' |
  while read -r lib; do cp -L "$lib" "$dir/lib/"; done
data=$(dirname "$(dpkg -L espeak-ng-data | grep -m1 '/espeak-ng-data/phontab$')")
cp "$data"/{phontab,phonindex,phondata,intonations,en_dict} "$dir/espeak-ng-data/"
cp -r "$data/lang" "$dir/espeak-ng-data/"
[ -d "$data/voices" ] && cp -r "$data/voices" "$dir/espeak-ng-data/"
cat > "$dir/ttsgen.sh" <<'SH'
#!/usr/bin/env bash
# Runs the bundled ttsgen with its libraries and espeak-ng data.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
exec "$here/ttsgen" --espeak-data "$here" "$@"
SH
chmod +x "$dir/ttsgen.sh"
du -sh "$dir"
