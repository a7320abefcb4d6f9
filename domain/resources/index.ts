import { makeUndoWrite } from '../gate/undo-write';
import type { GatedWrite } from '../gate/writes';
import { bookEvent, deleteEvent, updateEvent } from './calendar';
import { createCustomer, updateCustomer } from './customers';
import { createMeetingIngest } from './meeting-ingests';
import { forget, remember } from './memories';
import { createProject, deleteProject, updateProject } from './projects';
import { createTask, deleteTask, updateTask } from './tasks';

/** The gated writes of the resource families, each declared in its family's file. */
/** The resources' own gated writes: what a changeset's items may be (an undo is not one of them). */
export const resourceWrites: readonly GatedWrite[] = [
  createTask,
  updateTask,
  deleteTask,
  createProject,
  updateProject,
  deleteProject,
  createCustomer,
  updateCustomer,
  bookEvent,
  updateEvent,
  deleteEvent,
  createMeetingIngest,
  remember,
  forget,
];

/** An agent's undo of any of the writes above (that declare their record): a gated write of its own. */
export const undoWrite = makeUndoWrite(findGatedWrite);
/** Every gated write of every family, each declared in its family's file, and the undo; the worker finds them here by name. */
export const everyGatedWrite: readonly GatedWrite[] = [...resourceWrites, undoWrite];

const byName = new Map(everyGatedWrite.map((write) => [write.name, write]));

export function findGatedWrite(name: string): GatedWrite | undefined {
  return byName.get(name);
}
