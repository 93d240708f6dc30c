#!/usr/bin/env bash
# Makes the noise fixtures of test/fixtures/audio/ (README.md there): street noise, a babble of
# six eSpeak voices and a crowd of twelve, 8 kHz 16-bit mono, each at -32 dBFS RMS: 10 dB under the speech fixtures
# (hello-appointment.wav is -22 dBFS RMS), the "~10 dB SNR" of the noise-suppression tests and
# of `npm run bench:noise`. Nothing is downloaded: eSpeak NG and SoX make everything
# (apt-get install espeak-ng sox). The outputs are checked in; the tests do not run this.
#
#   bash scripts/make-noise-fixtures.sh [out-dir]     (default test/fixtures/audio)
set -euo pipefail
out=${1:-test/fixtures/audio}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
secs=8
level=-32 # dBFS RMS
fmt=(-r 8000 -c 1 -b 16 -e signed-integer)

# Street: brown-noise rumble (traffic) and pink-noise hiss (wind, tyres), swelling slowly as cars
# pass (a 0.15 Hz tremolo), band-limited to the telephone band like a phone line is. Seeded: the
# same file every run.
sox -D -R -n "${fmt[@]}" "$tmp/brown.wav" synth "$secs" brownnoise
sox -D -R -n "${fmt[@]}" "$tmp/pink.wav" synth "$secs" pinknoise vol 0.5
sox -D -m -v 0.5 "$tmp/brown.wav" -v 0.5 "$tmp/pink.wav" "$tmp/street-raw.wav" tremolo 0.15 60 sinc 100-3400

# Babble: six voices (men and women, accents, speeds, pitches), each saying other sentences,
# started at different moments and looped to fill the file, mixed: a crowded room where no one
# voice stands out.
voices=(en-us en-gb+f3 en-gb-scotland en-us+f4 en-029 en-gb-x-rp+m3)
texts=(
  "The train to the city leaves from platform four in about ten minutes, so we should hurry."
  "I told her the meeting was moved to Thursday afternoon, but she never got the message."
  "Could you pass me the menu? I think I will have the soup and maybe a small salad."
  "We went to the market on Saturday and bought apples, bread, cheese and some flowers."
  "He said the weather would be better next week, and then it rained for five days straight."
  "My brother just started a new job downtown and he takes the bus there every morning."
)
mix=()
for i in "${!voices[@]}"; do
  espeak-ng -v "${voices[$i]}" -s $((140 + 12 * i)) -p $((30 + 9 * i)) -w "$tmp/v$i.raw.wav" "${texts[$i]} ${texts[$(((i + 1) % 6))]}"
  # Offset each voice (a different start), loop it, cut it to the length.
  sox -D "$tmp/v$i.raw.wav" "${fmt[@]}" "$tmp/v$i.wav" trim $((i * 7 % 10)).$((i * 3)) repeat 3 trim 0 "$secs"
  mix+=(-v 0.3 "$tmp/v$i.wav")
done
sox -D -m "${mix[@]}" "$tmp/babble-raw.wav" sinc 100-3400

# Crowd: the same six voices twice over, the second time later and pitched apart (12 talkers): no
# longer one conversation to follow, not yet the steady hum of a canteen (which Silero ignores).
crowd=("${mix[@]}")
for i in "${!voices[@]}"; do
  sox -D "$tmp/v$i.wav" "$tmp/w$i.wav" pitch $((((i % 3) - 1) * 150)) trim 2.$((i * 13 % 10)) repeat 1 trim 0 "$secs"
  crowd+=(-v 0.3 "$tmp/w$i.wav")
done
sox -D -m "${crowd[@]}" "$tmp/crowd-raw.wav" sinc 100-3400

# Both at exactly $level dBFS RMS.
for n in street babble crowd; do
  rms=$(sox "$tmp/$n-raw.wav" -n stats 2>&1 | awk '/RMS lev dB/ {print $4}')
  sox -D "$tmp/$n-raw.wav" "$out/noise-$n.wav" gain "$(awk -v r="$rms" -v l="$level" 'BEGIN {print l - r}')"
  echo "$out/noise-$n.wav: $(sox "$out/noise-$n.wav" -n stats 2>&1 | awk '/RMS lev dB/ {print $4}') dBFS RMS"
done
