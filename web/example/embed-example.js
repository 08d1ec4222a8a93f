// Drives the third embed of the example page through coordlab's postMessage API (version 1,
// docs/embedding.md) and lists what it reports. The page and the embeds share an origin here;
// a page on another origin names itself in the embed link (`&origin=https://…`).
const frame = document.getElementById('driven');
const said = document.getElementById('said');

for (const button of document.querySelectorAll('[data-send]')) {
  button.addEventListener('click', () => {
    const command = { coordlab: 1, ...JSON.parse(button.dataset.send) };
    frame.contentWindow.postMessage(command, location.origin);
  });
}

addEventListener('message', (event) => {
  if (event.origin !== location.origin || event.source !== frame.contentWindow) return;
  const m = event.data;
  if (!m || m.coordlab !== 1) return;
  let text;
  if (m.type === 'ready') text = `ready: ${m.title}, steps 0–${m.steps - 1}, ${m.beats.length} beats`;
  else if (m.type === 'beat') text = `beat ${m.index + 1}: ${m.title} (step ${m.step})`;
  else if (m.type === 'violation') text = `violation: ${m.property} breaks at step ${m.step}`;
  else if (m.type === 'error') text = `error: ${m.message}`;
  else return; // `step` arrives on every move; the list keeps to the story
  const item = document.createElement('li');
  item.textContent = text;
  said.append(item);
  said.scrollTop = said.scrollHeight;
});
