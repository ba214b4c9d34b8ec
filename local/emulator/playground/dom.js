// The page's DOM helpers: finding, making and filling elements, and the copy buttons.

export const $ = (selector) => document.querySelector(selector);

export function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value);
  }
  for (const child of [].concat(children)) node.append(child);
  return node;
}

export function errorBox(title, code, message) {
  return el('div', { class: 'error', role: 'alert' }, [
    el('strong', { text: title }),
    ...(code ? [el('div', {}, [el('code', { text: code })])] : []),
    el('p', { text: message }),
  ]);
}

export function setStatus(node, text, kind = '') {
  node.textContent = text;
  node.className = `status ${kind}`;
}

/** Every `button.copy` copies the text of the element its `data-copy` names, or selects it when the clipboard is refused. */
export function wireCopyButtons() {
  document.addEventListener('click', async (event) => {
    const button = event.target.closest('button.copy');
    if (!button) return;
    const text = $(`#${button.dataset.copy}`).textContent;
    try {
      await navigator.clipboard.writeText(text);
      button.textContent = 'Copied';
    } catch {
      const range = document.createRange();
      range.selectNodeContents($(`#${button.dataset.copy}`));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      button.textContent = 'Selected';
    }
    button.classList.add('done');
    setTimeout(() => {
      button.textContent = 'Copy';
      button.classList.remove('done');
    }, 1200);
  });
}
